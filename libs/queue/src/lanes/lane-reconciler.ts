import { DeadReason, RECONCILE_EVERY_MS, drainJobId } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import type { DrainScheduler, LaneToSchedule } from './drain-scheduler';
import type { LaneStore } from './lane-store';

export interface ReconcileReport {
  /** Scheduled lanes looked at. */
  lanes: number;
  /** Lanes whose drain job was missing or failed, and got a new one. */
  restarted: number;
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
 * job surviving: a crash between enqueue and the job add, a job deleted by hand, or a
 * job that failed for good all leave a scheduled lane without a live job. For each one
 * found, the lane gets a new generation (so any straggler of the old job is stale) and
 * a new job. Replicas may run this at the same time: the generation swap is a
 * compare-and-set, so only one of them restarts a given lane.
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
    const report: ReconcileReport = { lanes: 0, restarted: 0, routeRemoved: 0 };
    const known = new Set(configuredRoutes);
    await this.reportConfigured(configuredRoutes, now);
    const everSeen = await this.ctx.redis.smembers(this.ctx.keys.routes);
    for (const route of configuredRoutes) {
      for await (const page of this.lanes.lanesOf(route)) {
        report.lanes += page.length;
        report.restarted += await this.restartLost(route, page);
      }
    }
    for (const route of everSeen) {
      if (known.has(route) || !(await this.unservedLongEnough(route, now, removedAfterMs)))
        continue;
      for await (const page of this.lanes.lanesOf(route)) {
        for (const lane of page)
          report.routeRemoved += await this.lanes.killLane(lane, DeadReason.RouteRemoved);
      }
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

  private async restartLost(route: string, lanes: string[]): Promise<number> {
    const { redis, keys } = this.ctx;
    const gens = await redis
      .pipeline(lanes.map((lane) => ['hget', keys.laneState(lane), 'gen']))
      .exec();
    const queue = this.scheduler.queue(route);
    const failedKey = queue.toKey('failed');
    const check = redis.pipeline();
    const candidates: { lane: string; gen: number }[] = [];
    lanes.forEach((lane, i) => {
      const raw = gens?.[i]?.[1];
      if (raw === null || raw === undefined) return;
      const gen = Number(raw);
      candidates.push({ lane, gen });
      const jobId = drainJobId(lane, gen);
      check.exists(queue.toKey(jobId));
      check.zscore(failedKey, jobId);
    });
    if (!candidates.length) return 0;
    const states = (await check.exec()) ?? [];
    const toSchedule: LaneToSchedule[] = [];
    for (let i = 0; i < candidates.length; i++) {
      const exists = Number(states[i * 2]?.[1]) === 1;
      const failed = states[i * 2 + 1]?.[1] !== null && states[i * 2 + 1]?.[1] !== undefined;
      if (exists && !failed) continue;
      const next = await this.lanes.reschedule(candidates[i].lane, candidates[i].gen);
      if (next !== undefined) toSchedule.push({ route, lane: candidates[i].lane, gen: next });
    }
    if (toSchedule.length) await this.scheduler.schedule(toSchedule);
    return toSchedule.length;
  }
}
