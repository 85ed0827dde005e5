import { Queue, Worker, type Job } from 'bullmq';
import type { ConfigService } from '@relaygram/config';
import {
  JobName,
  PRUNE_DEAD_LETTERS_EVERY_MS,
  QueueName,
  type JobPayloads,
} from '@relaygram/contracts';
import type { RelaygramMetrics } from '@relaygram/observability';
import {
  createRedis,
  readRouteStats,
  waitForRedis,
  type DeadLetterStore,
  type LaneReconciler,
  type QueueContext,
  type ReconcileReport,
  type RelaygramRedis,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { processorFor, type JobHandler } from '../workers/job-processors';

type MaintenanceJob = JobPayloads[JobName.ReconcileLanes] | JobPayloads[JobName.PruneDeadLetters];

export interface MaintenanceSettings {
  redisUrl: string;
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
 * queue (each run is done by one replica): reconcile lanes every RECONCILE_EVERY_MS and
 * prune dead-letter indexes hourly. Each replica also runs one reconcile at start and,
 * on its own timer, reports the routes it serves (see LaneReconciler) and refreshes its
 * queue gauges.
 */
export class MaintenanceScheduler {
  #queue?: Queue<MaintenanceJob>;
  #worker?: Worker<MaintenanceJob>;
  #connection?: RelaygramRedis;
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
  ) {}

  start(): void {
    const processor = processorFor(QueueName.Maintenance, {
      [JobName.ReconcileLanes]: (() => this.reconcile()) as JobHandler<JobName>,
      [JobName.PruneDeadLetters]: (() => this.prune()) as JobHandler<JobName>,
    });
    this.#queue = new Queue<MaintenanceJob>(QueueName.Maintenance, {
      connection: this.ctx.redis,
      prefix: this.ctx.keys.bullPrefix,
      skipVersionCheck: true,
    });
    this.#queue.on('error', () => undefined);
    this.#connection = createRedis(this.settings.redisUrl, {
      mode: 'blocking',
      connectionName: 'relaygram-dispatcher-maintenance',
    });
    this.#connection.on('error', () => undefined);
    this.#worker = new Worker<MaintenanceJob>(
      QueueName.Maintenance,
      (job: Job<MaintenanceJob>, token?: string) => processor(job, token),
      {
        connection: this.#connection,
        prefix: this.ctx.keys.bullPrefix,
        concurrency: 1,
      },
    );
    this.#worker.on('error', (error) =>
      this.logger.error({ error: error.message }, 'maintenance worker error'),
    );
    this.#worker.on('failed', (job, error) =>
      this.logger.error({ job: job?.name, error: error.message }, 'maintenance job failed'),
    );
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
      this.logger.warn(
        { error: error instanceof Error ? error.message : String(error) },
        'lane reconciliation failed; the next run retries',
      ),
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

  status(): boolean {
    return Boolean(this.#worker?.isRunning()) && this.#connection?.status === 'ready';
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#worker?.close().catch(() => undefined);
    await this.#queue?.close().catch(() => undefined);
    await this.#connection?.quit().catch(() => this.#connection?.disconnect());
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
      this.logger.warn(
        { error: error instanceof Error ? error.message : String(error) },
        'dispatcher housekeeping failed; retrying on the next tick',
      );
    }
  }

  async #schedule(): Promise<void> {
    const queue = this.#queue;
    if (!queue) return;
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
