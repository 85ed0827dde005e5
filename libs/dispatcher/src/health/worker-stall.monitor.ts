import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Feature } from '@relaygram/contracts';
import { HealthRegistry, RelaygramMetrics, withTimeout } from '@relaygram/observability';
import { DrainScheduler, QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import { DeliveryWorkers } from '../workers/delivery-workers';
import { WorkerStallWatch, type WorkerStall } from './worker-stall';

const READ_TIMEOUT_MS = 2000;

/**
 * Looks at every route's worker and queue on a timer (WorkerStallWatch says what a
 * stall is). A stalled worker is logged, counted in `relaygram_dispatcher_stalled_workers`
 * and fails `/health/live`: its process looks healthy in every other way, and only a
 * restart gets its route delivered again on this replica (its running jobs are handed
 * back as for any restart). The looks read Redis; when Redis does not answer, nothing
 * is concluded, so an outage never fails liveness.
 */
@Injectable()
export class WorkerStallMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #watch: WorkerStallWatch;
  readonly #stalled = new Map<string, WorkerStall>();
  #timer: NodeJS.Timeout | undefined;
  #looking = false;

  constructor(
    private readonly workers: DeliveryWorkers,
    private readonly scheduler: DrainScheduler,
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
              message: `route workers take no jobs while jobs wait: ${stalled.map((s) => s.route).join(', ')}`,
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

  /** The routes whose worker is stalled now, with the job that waits and since when. */
  stalled(): { route: string; job: string; since: string }[] {
    return [...this.#stalled].map(([route, stall]) => ({
      route,
      job: stall.job,
      since: new Date(stall.since).toISOString(),
    }));
  }

  /** One look at every route's worker. */
  async look(): Promise<void> {
    if (this.#looking) return;
    this.#looking = true;
    try {
      const activity = this.workers.activity();
      const served = new Set(activity.map((a) => a.route));
      this.#watch.keepOnly(served);
      for (const route of [...this.#stalled.keys()]) if (!served.has(route)) this.#clear(route);
      await Promise.all(
        activity.map(async ({ route, started, freeSlot }) => {
          let oldest: string | null;
          try {
            const waitList = this.scheduler.queue(route).keys.wait as string;
            oldest = await withTimeout(this.ctx.redis.lindex(waitList, -1), READ_TIMEOUT_MS);
          } catch {
            return;
          }
          const stall = this.#watch.observe(route, {
            oldestWaiting: oldest ?? undefined,
            started,
            freeSlot,
            at: Date.now(),
          });
          if (stall) this.#report(route, stall);
          else this.#clear(route);
        }),
      );
    } finally {
      this.#looking = false;
    }
  }

  #report(route: string, stall: WorkerStall): void {
    if (this.#stalled.has(route)) return;
    this.#stalled.set(route, stall);
    this.metrics.stalledWorkers.set({ route }, 1);
    this.logger.error(
      { route, job: stall.job, since: new Date(stall.since).toISOString() },
      'route worker takes no jobs while one waits and it has a free slot; /health/live fails so the process is restarted',
    );
  }

  #clear(route: string): void {
    if (!this.#stalled.delete(route)) return;
    this.metrics.stalledWorkers.set({ route }, 0);
    this.logger.info({ route }, 'route worker takes jobs again');
  }
}
