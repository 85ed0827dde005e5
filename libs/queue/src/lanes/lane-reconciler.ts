import { DeadReason, drainJobId } from '@relaygram/contracts';
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

/**
 * Keeps every non-empty lane moving. A lane's progress must not depend on one BullMQ
 * job surviving: a crash between enqueue and the job add, a job deleted by hand, or a
 * job that failed for good all leave a scheduled lane without a live job. For each one
 * found, the lane gets a new generation (so any straggler of the old job is stale) and
 * a new job. Replicas may run this at the same time: the generation swap is a
 * compare-and-set, so only one of them restarts a given lane.
 */
export class LaneReconciler {
  constructor(
    private readonly ctx: QueueContext,
    private readonly lanes: LaneStore,
    private readonly scheduler: DrainScheduler,
  ) {}

  async reconcile(configuredRoutes: readonly string[]): Promise<ReconcileReport> {
    const report: ReconcileReport = { lanes: 0, restarted: 0, routeRemoved: 0 };
    const known = new Set(configuredRoutes);
    const everSeen = await this.ctx.redis.smembers(this.ctx.keys.routes);
    for (const route of configuredRoutes) {
      for await (const page of this.lanes.lanesOf(route)) {
        report.lanes += page.length;
        report.restarted += await this.restartLost(route, page);
      }
    }
    for (const route of everSeen) {
      if (known.has(route)) continue;
      for await (const page of this.lanes.lanesOf(route)) {
        for (const lane of page)
          report.routeRemoved += await this.lanes.killLane(lane, DeadReason.RouteRemoved);
      }
    }
    return report;
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
