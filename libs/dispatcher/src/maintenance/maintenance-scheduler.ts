import { Inject, Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import {
  JobName,
  PRUNE_DEAD_LETTERS_EVERY_MS,
  QueueName,
  type JobNameOn,
  type JobOf,
} from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { QUEUE_CONTEXT, readRouteStats, waitForRedis, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import { LaneMaintenance } from './lane-maintenance';

export type MaintenanceJob = JobOf<JobNameOn<QueueName.Maintenance>>['data'];

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
@Injectable()
export class MaintenanceScheduler {
  #timer?: NodeJS.Timeout;

  constructor(
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    private readonly maintenance: LaneMaintenance,
    private readonly metrics: RelaygramMetrics,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS)
    private readonly settings: Pick<ResolvedDispatcherOptions, 'reconcileEveryMs'>,
    @InjectQueue(QueueName.Maintenance) private readonly queue: Queue<MaintenanceJob>,
  ) {}

  start(): void {
    this.queue.on('error', () => undefined);
    this.#timer = setInterval(() => void this.#tick(), this.settings.reconcileEveryMs);
    this.#timer.unref();
    // The shared connection fails fast while it is still connecting at start.
    void waitForRedis(this.ctx.redis, this.settings.reconcileEveryMs)
      .then(() => this.#tick())
      .then(() => this.maintenance.reconcileSoon());
  }

  /** Reconcile now, in the background (after a reload). */
  reconcileSoon(): void {
    this.maintenance.reconcileSoon();
  }

  /** Stops this replica's own timer; the worker and queue close with the app. */
  stop(): void {
    this.maintenance.stop();
    if (this.#timer) clearInterval(this.#timer);
  }

  /**
   * This replica's own round: report the routes it serves, make sure the shared
   * schedules exist, refresh the gauges. Failures are logged and retried on the next
   * tick.
   *
   * The schedules are upserted on every tick, not once: BullMQ adds a schedule's next
   * run as it starts the current one, and a Redis failover can lose that write (the
   * promoted replica had not received it). The schedule then never runs again, and
   * with it the reconciler that repairs what the failover broke. Upserting a schedule
   * whose next run exists keeps that run's time; one whose next run is gone gets it back.
   */
  async #tick(): Promise<void> {
    try {
      const routes = this.maintenance.routes();
      await this.maintenance.reportConfigured(routes);
      await this.#schedule();
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
