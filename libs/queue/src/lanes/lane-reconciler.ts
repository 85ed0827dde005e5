import { ARMED_JOB_GRACE_MS, DeadReason, RECONCILE_EVERY_MS } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import type { DrainScheduler } from './drain-scheduler';
import type { DrainJobsToAdd } from './drain-script-io';
import type { LaneStore } from './lane-store';

export interface ReconcileReport {
  /** Non-empty lanes looked at. */
  lanes: number;
  /** Lanes put back where a drain job finds them, and drain jobs armed, to keep lanes moving. */
  restarted: number;
  /** Drain jobs found gone (never added, deleted by hand, failed for good) and dropped. */
  jobsDropped: number;
  /** Deliveries of routes no longer configured, moved to dead letters. */
  routeRemoved: number;
}

export interface ReconcileOptions {
  now?: number;
  /**
   * How long a route must have gone unserved (no replica reporting it configured)
   * before its lanes are moved to dead letters as `route_removed`.
   */
  removedAfterMs?: number;
  /** How long an armed job may go without its BullMQ job before it counts as lost. */
  armedGraceMs?: number;
}

/**
 * Long enough for a rolling update of every dispatcher replica: until then a replica on
 * the old config does not kill the lanes of a route the new config added.
 */
export const ROUTE_REMOVED_AFTER_MS = 5 * 60_000;

/** Replicas report their routes at least this often (see `reportConfigured`). */
export const ROUTE_PRESENCE_EVERY_MS = RECONCILE_EVERY_MS;

/**
 * Keeps every non-empty lane moving. A lane's progress must not depend on one BullMQ
 * job surviving: a crash between a script and the job add, a job deleted by hand, a
 * job that failed for good (a tiny maxStalledCount), all leave lanes that no live job
 * will take. Per configured route, every period:
 * 1. drain jobs whose BullMQ job is gone (or failed) are dropped, and the lane each
 *    held goes back to the route under a new generation (any straggler is stale);
 *    jobs armed less than ARMED_JOB_GRACE_MS ago are spared (their add may be on its way);
 * 2. every lane of the route's lane set that is neither listed (ready, backing off) nor
 *    held by a live job's entry is scheduled;
 * 3. jobs are armed for waiting lanes, and a wake job for the earliest backing-off lane.
 * Replicas may run this at the same time: each repair is one script that re-checks
 * what it acts on, so a repair raced by a live job changes nothing.
 *
 * Lanes of a route that no replica has configured go dead as `route_removed`, but
 * only after `removedAfterMs`: every dispatcher replica reports the routes it serves
 * (`reportConfigured`), and the clock of an unserved route starts at its last report
 * or, for a route never reported, when a reconciler first meets it.
 */
export class LaneReconciler {
  constructor(
    private readonly ctx: QueueContext,
    private readonly lanes: LaneStore,
    private readonly scheduler: DrainScheduler,
  ) {}

  /** Record that this replica serves these routes (every ROUTE_PRESENCE_EVERY_MS). */
  async reportConfigured(routes: readonly string[], now = Date.now()): Promise<void> {
    if (!routes.length) return;
    const fields: (string | number)[] = [];
    for (const route of routes) fields.push(route, now);
    await this.ctx.redis.hset(this.ctx.keys.routePresence, ...fields);
  }

  async reconcile(
    configuredRoutes: readonly string[],
    options: ReconcileOptions = {},
  ): Promise<ReconcileReport> {
    const now = options.now ?? Date.now();
    const removedAfterMs = options.removedAfterMs ?? ROUTE_REMOVED_AFTER_MS;
    const report: ReconcileReport = { lanes: 0, restarted: 0, jobsDropped: 0, routeRemoved: 0 };
    const known = new Set(configuredRoutes);
    await this.reportConfigured(configuredRoutes, now);
    const everSeen = await this.ctx.redis.smembers(this.ctx.keys.routes);
    for (const route of configuredRoutes) {
      const jobs: DrainJobsToAdd = { arms: [], wakes: [] };
      const grace = options.armedGraceMs ?? ARMED_JOB_GRACE_MS;
      const live = await this.dropGoneJobs(route, now, grace, report, jobs);
      for await (const page of this.lanes.lanesOf(route)) {
        report.lanes += page.length;
        await this.repairLanes(page, live, now, report, jobs);
      }
      collect(jobs, await this.lanes.ensureDraining(route, now));
      report.restarted += jobs.arms.length + jobs.wakes.length;
      await this.scheduler.add(jobs);
    }
    for (const route of everSeen) {
      if (known.has(route) || !(await this.unservedLongEnough(route, now, removedAfterMs)))
        continue;
      for await (const page of this.lanes.lanesOf(route)) {
        for (const lane of page)
          report.routeRemoved += await this.lanes.killLane(lane, DeadReason.RouteRemoved, now);
      }
      await this.forgetDrains(route);
    }
    return report;
  }

  private async unservedLongEnough(
    route: string,
    now: number,
    removedAfterMs: number,
  ): Promise<boolean> {
    const { redis, keys } = this.ctx;
    // A route met for the first time starts its clock now rather than counting as
    // unserved forever: it may be new, with no replica on the new config up yet.
    await redis.hsetnx(keys.routePresence, route, now);
    const since = Number(await redis.hget(keys.routePresence, route));
    return Number.isFinite(since) && now - since >= removedAfterMs;
  }

  /** Step 1. Returns the entries of the jobs left (job id → entry). */
  private async dropGoneJobs(
    route: string,
    now: number,
    graceMs: number,
    report: ReconcileReport,
    jobs: DrainJobsToAdd,
  ): Promise<Map<string, string>> {
    const { redis, keys } = this.ctx;
    const entries = await redis.hgetall(keys.drainJobs(route));
    const ids = Object.keys(entries);
    const live = new Map(Object.entries(entries));
    if (!ids.length) return live;
    const failedKey = this.scheduler.queue(route).toKey('failed');
    const check = redis.pipeline();
    for (const id of ids) {
      check.exists(this.scheduler.jobKey(route, id));
      check.zscore(failedKey, id);
    }
    const states = (await check.exec()) ?? [];
    for (let i = 0; i < ids.length; i++) {
      const entry = entries[ids[i]];
      const exists = Number(states[i * 2]?.[1]) === 1;
      const failed = states[i * 2 + 1]?.[1] !== null && states[i * 2 + 1]?.[1] !== undefined;
      if (exists && !failed) continue;
      if (entry.startsWith('a') && now - Number(entry.slice(1)) < graceMs) continue;
      const dropped = await this.lanes.dropJob(route, ids[i], entry, now);
      if (!dropped.dropped) continue;
      live.delete(ids[i]);
      report.jobsDropped += 1;
      collect(jobs, dropped.jobs);
    }
    return live;
  }

  /** Step 2, for one page of lanes; only suspects go through the repair script. */
  private async repairLanes(
    lanes: readonly string[],
    live: ReadonlyMap<string, string>,
    now: number,
    report: ReconcileReport,
    jobs: DrainJobsToAdd,
  ): Promise<void> {
    const { redis, keys } = this.ctx;
    const states =
      (await redis
        .pipeline(lanes.map((lane) => ['hmget', keys.laneState(lane), 'job', 'q']))
        .exec()) ?? [];
    for (let i = 0; i < lanes.length; i++) {
      const [job, q] = (states[i]?.[1] ?? []) as (string | null)[];
      const held = job !== null && job !== undefined && live.get(job) === `l${lanes[i]}`;
      const listed = (job === null || job === undefined) && (q === 'r' || q === 'd');
      if (held || listed) continue;
      const repaired = await this.lanes.repairLane(lanes[i], now);
      if (repaired.outcome === 'scheduled') report.restarted += 1;
      collect(jobs, repaired.jobs);
    }
  }

  /** A removed route whose lanes are all dead: its drain bookkeeping goes too. */
  private async forgetDrains(route: string): Promise<void> {
    const { redis, keys } = this.ctx;
    if ((await redis.scard(keys.routeLanes(route))) > 0) return;
    await redis.del(
      keys.readyLanes(route),
      keys.delayedLanes(route),
      keys.drainJobs(route),
      keys.drainState(route),
      keys.idleJobs(route),
    );
  }
}

function collect(into: DrainJobsToAdd, from: DrainJobsToAdd): void {
  into.arms.push(...from.arms);
  into.wakes.push(...from.wakes);
}
