import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Feature } from '@relaygram/contracts';
import { HealthRegistry, RelaygramMetrics, withTimeout } from '@relaygram/observability';
import { QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import { MaintenanceProcessor } from '../maintenance/maintenance.processor';
import { DeliveryWorkers } from '../workers/delivery-workers';
import { WorkerStallWatch, type WorkerActivity, type WorkerStall } from './worker-stall';

const READ_TIMEOUT_MS = 2000;
/** BullMQ's delayed set scores a job by its due time (ms) times 0x1000, plus a counter. */
const DELAYED_SCORE_FACTOR = 0x1000;

interface Stalled extends WorkerStall {
  name: string;
}

/**
 * Looks at every worker of the dispatcher (each route's and the maintenance one) on a
 * timer; WorkerStallWatch says what a stall is. The job watched is the first of the
 * queue's wait list, or else its first delayed job once that is due: a delayed job
 * (a backed-off lane's wake, the next reconcile) waits for a worker to promote it, so
 * with every worker stuck it would never reach the wait list. A stalled worker is
 * logged, counted in `relaygram_dispatcher_stalled_workers` and fails `/health/live`:
 * its process looks healthy in every other way, and only a restart gets its queue
 * served again on this replica (its running jobs are handed back as for any restart).
 * The looks read Redis; when Redis does not answer, nothing is concluded, so an outage
 * never fails liveness.
 */
@Injectable()
export class WorkerStallMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #watch: WorkerStallWatch;
  /** By BullMQ queue name. */
  readonly #stalled = new Map<string, Stalled>();
  #timer: NodeJS.Timeout | undefined;
  #looking = false;

  constructor(
    private readonly workers: DeliveryWorkers,
    private readonly maintenance: MaintenanceProcessor,
    private readonly health: HealthRegistry,
    private readonly metrics: RelaygramMetrics,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS)
    private readonly options: Pick<ResolvedDispatcherOptions, 'stallAfterMs' | 'stallCheckEveryMs'>,
  ) {
    this.#watch = new WorkerStallWatch(options.stallAfterMs);
  }

  onApplicationBootstrap(): void {
    this.health.addLivenessCheck(Feature.Dispatcher, () => {
      const stalled = this.stalled();
      return stalled.length === 0
        ? { alive: true }
        : {
            alive: false,
            detail: {
              message: `workers take no jobs while jobs wait: ${stalled.map((s) => s.worker).join(', ')}`,
              stalled,
            },
          };
    });
    this.#timer = setInterval(() => void this.look(), this.options.stallCheckEveryMs);
    this.#timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.#timer);
  }

  /** The workers stalled now, with the job that waits and since when. */
  stalled(): { worker: string; queue: string; job: string; since: string }[] {
    return [...this.#stalled].map(([queue, stall]) => ({
      worker: stall.name,
      queue,
      job: stall.job,
      since: new Date(stall.since).toISOString(),
    }));
  }

  /** One look at every worker. */
  async look(): Promise<void> {
    if (this.#looking) return;
    this.#looking = true;
    try {
      const maintenance = this.maintenance.activity();
      const activity = maintenance
        ? [...this.workers.activity(), maintenance]
        : this.workers.activity();
      const served = new Set(activity.map((a) => a.queue));
      this.#watch.keepOnly(served);
      for (const queue of [...this.#stalled.keys()]) if (!served.has(queue)) this.#clear(queue);
      await Promise.all(activity.map((worker) => this.#lookAt(worker)));
    } finally {
      this.#looking = false;
    }
  }

  async #lookAt(worker: WorkerActivity): Promise<void> {
    let first: string | undefined;
    try {
      first = await withTimeout(this.#firstWaiting(worker), READ_TIMEOUT_MS);
    } catch {
      return;
    }
    const stall = this.#watch.observe(worker.queue, {
      oldestWaiting: first,
      started: worker.started,
      freeSlot: worker.freeSlot,
      at: Date.now(),
    });
    if (stall) this.#report(worker, stall);
    else this.#clear(worker.queue);
  }

  /** The wait list's oldest job, or else the first delayed job if it is due. */
  async #firstWaiting(worker: WorkerActivity): Promise<string | undefined> {
    const [[, oldest], [, delayed]] = (await this.ctx.redis
      .pipeline()
      .lindex(worker.waitKey, -1)
      .zrange(worker.delayedKey, 0, 0, 'WITHSCORES')
      .exec()) as [[unknown, string | null], [unknown, string[]]];
    if (oldest) return oldest;
    const [job, score] = delayed ?? [];
    if (job === undefined || score === undefined) return undefined;
    return Math.floor(Number(score) / DELAYED_SCORE_FACTOR) <= Date.now() ? job : undefined;
  }

  #report(worker: WorkerActivity, stall: WorkerStall): void {
    if (this.#stalled.has(worker.queue)) return;
    this.#stalled.set(worker.queue, { ...stall, name: worker.name });
    this.metrics.stalledWorkers.set({ queue: worker.queue }, 1);
    this.logger.error(
      {
        worker: worker.name,
        queue: worker.queue,
        job: stall.job,
        since: new Date(stall.since).toISOString(),
      },
      'worker takes no jobs while one waits and it has a free slot; /health/live fails so the process is restarted',
    );
  }

  #clear(queue: string): void {
    const stalled = this.#stalled.get(queue);
    if (!stalled) return;
    this.#stalled.delete(queue);
    this.metrics.stalledWorkers.set({ queue }, 0);
    this.logger.info({ worker: stalled.name, queue }, 'worker takes jobs again');
  }
}
