import type { Queue } from 'bullmq';
import type { ConfigService } from '@relaygram/config';
import { JobName, PRUNE_DEAD_LETTERS_EVERY_MS, type JobPayloads } from '@relaygram/contracts';
import type { RelaygramMetrics } from '@relaygram/observability';
import {
  readRouteStats,
  waitForRedis,
  type DeadLetterStore,
  type LaneReconciler,
  type QueueContext,
  type ReconcileReport,
} from '@relaygram/queue';
import type { Logger } from 'pino';

export type MaintenanceJob =
  JobPayloads[JobName.ReconcileLanes] | JobPayloads[JobName.PruneDeadLetters];

export interface MaintenanceSettings {
  reconcileEveryMs: number;
  routeRemovedAfterMs: number;
}

/** Failed housekeeping jobs kept for inspection; every run is replaced by the next. */
const MAINTENANCE_JOB_OPTIONS = Object.freeze({
  removeOnComplete: true,
  removeOnFail: { count: 50 },
});

/**
 * Housekeeping, shared by all replicas through BullMQ job schedulers on the maintenance
 * queue (each run is done by one replica, see MaintenanceProcessor): reconcile lanes
 * every RECONCILE_EVERY_MS and prune dead-letter indexes hourly. Each replica also runs
 * one reconcile at start and, on its own timer, reports the routes it serves (see
 * LaneReconciler) and refreshes its queue gauges.
 */
export class MaintenanceScheduler {
  #timer?: NodeJS.Timeout;
  #scheduled = false;
  #stopped = false;

  constructor(
    private readonly ctx: QueueContext,
    private readonly config: ConfigService,
    private readonly reconciler: LaneReconciler,
    private readonly dead: DeadLetterStore,
    private readonly metrics: RelaygramMetrics,
    private readonly logger: Logger,
    private readonly settings: MaintenanceSettings,
    private readonly queue: Queue<MaintenanceJob>,
  ) {}

  start(): void {
    this.queue.on('error', () => undefined);
    this.#timer = setInterval(() => void this.#tick(), this.settings.reconcileEveryMs);
    this.#timer.unref();
    // The shared connection fails fast while it is still connecting at start.
    void waitForRedis(this.ctx.redis, this.settings.reconcileEveryMs)
      .then(() => this.#tick())
      .then(() => this.reconcileSoon());
  }

  /** Reconcile now, in the background (at start, after a reload). */
  reconcileSoon(): void {
    if (this.#stopped) return;
    this.reconcile().catch((error: unknown) =>
      this.logger.warn({ err: error }, 'lane reconciliation failed; the next run retries'),
    );
  }

  async reconcile(): Promise<ReconcileReport> {
    const routes = this.config.config.routes.map((route) => route.name);
    const report = await this.reconciler.reconcile(routes, {
      removedAfterMs: this.settings.routeRemovedAfterMs,
    });
    if (report.restarted || report.routeRemoved) {
      this.logger.warn(
        { restarted: report.restarted, route_removed: report.routeRemoved, lanes: report.lanes },
        'lanes reconciled',
      );
    }
    return report;
  }

  async prune(): Promise<void> {
    const { routes, bots } = this.config.config;
    await this.dead.prune(
      routes.map((route) => route.name),
      bots.map((bot) => bot.id),
    );
  }

  /** Stops this replica's own timer; the worker and queue close with the app. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
  }

  /**
   * This replica's own round: report the routes it serves, make sure the shared
   * schedules exist (a Redis outage at start leaves them to a later tick), refresh the
   * gauges. Failures are logged and retried on the next tick.
   */
  async #tick(): Promise<void> {
    try {
      const routes = this.config.config.routes.map((route) => route.name);
      await this.reconciler.reportConfigured(routes);
      if (!this.#scheduled) await this.#schedule();
      await this.#refreshGauges(routes);
    } catch (error) {
      this.logger.warn({ err: error }, 'dispatcher housekeeping failed; retrying on the next tick');
    }
  }

  async #schedule(): Promise<void> {
    const queue = this.queue;
    await queue.upsertJobScheduler(
      JobName.ReconcileLanes,
      { every: this.settings.reconcileEveryMs },
      { name: JobName.ReconcileLanes, data: {}, opts: MAINTENANCE_JOB_OPTIONS },
    );
    await queue.upsertJobScheduler(
      JobName.PruneDeadLetters,
      { every: PRUNE_DEAD_LETTERS_EVERY_MS },
      { name: JobName.PruneDeadLetters, data: {}, opts: MAINTENANCE_JOB_OPTIONS },
    );
    this.#scheduled = true;
  }

  async #refreshGauges(routes: readonly string[]): Promise<void> {
    for (const route of routes) {
      const stats = await readRouteStats(this.ctx, route);
      this.metrics.queueDepth.set({ route }, stats.queued);
      this.metrics.lanes.set({ route }, stats.lanes);
      this.metrics.deadLetters.set({ route }, stats.dead);
    }
  }
}
