import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { Worker } from 'bullmq';
import { ConfigService } from '@relaygram/config';
import { JobName, QueueName, deliveryQueueName, type JobPayloads } from '@relaygram/contracts';
import {
  LaneStore,
  QUEUE_CONTEXT,
  createRedis,
  queueContext,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import type { WorkerActivity } from '../health/worker-stall';
import { DrainLocks } from '../lanes/drain-locks';
import { LaneDrainer, type DrainingJob } from '../lanes/lane-drainer';
import { processorFor, type QueueJob } from './job-processors';

type DeliveryJobName = DrainingJob['name'];
type DeliveryWorker = Worker<JobPayloads[DeliveryJobName], unknown, DeliveryJobName>;

interface RouteWorker {
  route: string;
  /** Lanes of a strict route are drained one at a time: no pipelining to gain. */
  strict: boolean;
  concurrency: number;
  worker: DeliveryWorker;
  /** BullMQ's connection for this route's worker (it blocks on a duplicate of it). */
  connection: RelaygramRedis;
  running: Promise<void>;
  /** Jobs this worker started, ever, and those running now: what the stall watch reads. */
  started: number;
  active: number;
}

/** What the workers read of the dispatcher's options (tests of stalled jobs shorten them). */
type WorkerSettings = Pick<
  ResolvedDispatcherOptions,
  | 'stalledIntervalMs'
  | 'lockDurationMs'
  | 'maxStalledCount'
  | 'shutdownGraceMs'
  | 'stallWorkerAfter'
>;

/**
 * One BullMQ worker per route, on the route's own queue, with `concurrency` slots per
 * replica: a slow or failing route fills only its own slots (SPEC section 5). Each job
 * is a lease on one slot (see LaneDrainer). Locks last DRAIN_LOCK_DURATION_MS and are
 * renewed while a job runs, waiting included; a dead replica's jobs are re-run after
 * the lock expires, up to DRAIN_MAX_STALLED_COUNT times, and take back their lanes.
 */
@Injectable()
export class DeliveryWorkers {
  readonly #workers = new Map<string, RouteWorker>();
  readonly #closing = new Set<Promise<void>>();
  readonly #workerName = `dispatcher@${hostname()}:${process.pid}`;
  /**
   * The lane scripts go over connections of their own: they wait for Redis rather than
   * fail (a blip must not fail jobs), and stay apart from BullMQ's connections, which
   * carry BullMQ's forty-odd scripts that an ioredis pipeline would copy every time.
   * Routes with many lanes in flight share one that pipelines the commands of a tick
   * into one write (far fewer syscalls); strict routes, one lane per bot and so one
   * command at a time, use one that writes each command at once (no pipeline to build,
   * no wait for the end of the tick).
   */
  readonly #pipelined: RelaygramRedis;
  readonly #direct: RelaygramRedis;
  readonly #pipelinedLanes: LaneStore;
  readonly #directLanes: LaneStore;
  readonly #redisUrl: string;

  constructor(
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    private readonly drainer: LaneDrainer,
    private readonly locks: DrainLocks,
    config: ConfigService,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS) private readonly settings: WorkerSettings,
  ) {
    this.#redisUrl = config.config.redis.url;
    const lanesConnection = (autoPipelining: boolean) => {
      const connection = createRedis(this.#redisUrl, {
        mode: 'blocking',
        connectionName: `relaygram-dispatcher-lanes${autoPipelining ? '-pipelined' : ''}`,
        autoPipelining,
      });
      connection.on('error', () => undefined);
      return connection;
    };
    this.#pipelined = lanesConnection(true);
    this.#direct = lanesConnection(false);
    const { prefix } = ctx.keys;
    this.#pipelinedLanes = new LaneStore(queueContext(this.#pipelined, prefix, ctx.deliveryLog));
    this.#directLanes = new LaneStore(queueContext(this.#direct, prefix, ctx.deliveryLog));
  }

  routes(): string[] {
    return [...this.#workers.keys()];
  }

  /** Each route's slots on this replica, as the heartbeat announces them. */
  slots(): { route: string; slots: number }[] {
    return [...this.#workers.values()].map((w) => ({ route: w.route, slots: w.concurrency }));
  }

  /** A lane store on this process's lane connections, for the inbox's heartbeats. */
  get lanes(): LaneStore {
    return this.#directLanes;
  }

  /** Starts a worker for the route, or updates the one it has (slots, ordering). */
  ensure(route: string, concurrency: number, strict: boolean): void {
    const existing = this.#workers.get(route);
    if (existing) {
      if (existing.worker.concurrency !== concurrency) existing.worker.concurrency = concurrency;
      existing.strict = strict;
      existing.concurrency = concurrency;
      return;
    }
    const connection = createRedis(this.#redisUrl, {
      mode: 'blocking',
      connectionName: `relaygram-dispatcher-${route}`,
    });
    const drain = (job: DrainingJob, token: string | undefined) =>
      this.drainer.drain(job, token, entry.strict ? this.#directLanes : this.#pipelinedLanes);
    const processor = processorFor(QueueName.Delivery, {
      [JobName.Drain]: drain,
      [JobName.DrainLane]: drain,
    });
    const worker: DeliveryWorker = new Worker(
      deliveryQueueName(route),
      async (job: QueueJob<DeliveryJobName>, token?: string) => {
        entry.started++;
        entry.active++;
        if (entry.started === this.settings.stallWorkerAfter) void worker.pause(true);
        try {
          return await processor(job, token);
        } finally {
          entry.active--;
        }
      },
      {
        connection,
        prefix: this.ctx.keys.bullPrefix,
        name: this.#workerName,
        concurrency,
        lockDuration: this.settings.lockDurationMs,
        maxStalledCount: this.settings.maxStalledCount,
        stalledInterval: this.settings.stalledIntervalMs,
        autorun: false,
        // Not skipVersionCheck: without the version BullMQ assumes a Redis that blocks
        // in whole seconds, and delayed retries wake up to a second late.
      },
    );
    worker.on('error', (error) =>
      this.logger.error({ route, err: error }, 'delivery worker error'),
    );
    worker.on('failed', (job, error) =>
      this.logger.error(
        { route, job: job?.id, attempts: job?.attemptsMade, err: error },
        'drain job failed',
      ),
    );
    worker.on('locksRenewed', ({ jobIds }) => this.locks.renewed(jobIds));
    worker.on('lockRenewalFailed', (jobIds) => this.locks.lost(jobIds));
    connection.on('error', () => undefined);
    const running = worker.run().catch((error: unknown) => {
      this.logger.error({ route, err: error }, 'delivery worker stopped');
    });
    const entry: RouteWorker = {
      route,
      strict,
      concurrency,
      worker,
      connection,
      running,
      started: 0,
      active: 0,
    };
    this.#workers.set(route, entry);
  }

  /**
   * Stops the route's worker: no new jobs; the ones running end after their attempt.
   * Returns at once; `close` waits for every worker being closed.
   */
  remove(route: string): Promise<void> {
    const entry = this.#workers.get(route);
    if (!entry) return Promise.resolve();
    this.#workers.delete(route);
    const closing = this.#close(entry).finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
    return closing;
  }

  /**
   * Each route worker's count of started jobs, and whether it has a slot free; also of a
   * worker whose loop ended: it takes no jobs either. Those being closed are left out.
   */
  activity(): WorkerActivity[] {
    return [...this.#workers.values()].map((w) => ({
      name: `route ${w.route}`,
      queue: w.worker.name,
      waitKey: w.worker.keys.wait as string,
      delayedKey: w.worker.keys.delayed as string,
      started: w.started,
      freeSlot: w.active < w.concurrency,
    }));
  }

  /** Workers that are running and connected, and those that are not. */
  status(): { running: string[]; down: string[] } {
    const running: string[] = [];
    const down: string[] = [];
    const lanesUp = this.#pipelined.status === 'ready' && this.#direct.status === 'ready';
    for (const { route, worker, connection } of this.#workers.values()) {
      (lanesUp && worker.isRunning() && connection.status === 'ready' ? running : down).push(route);
    }
    return { running, down };
  }

  /**
   * Shutdown: no new jobs; running ones hand their lanes on after their attempt, and
   * attempts still in flight after the grace period are cut (their lanes handed on too).
   */
  async close(): Promise<void> {
    this.drainer.stop();
    const grace = setTimeout(() => this.drainer.cutAttempts(), this.settings.shutdownGraceMs);
    grace.unref();
    try {
      const all = [...this.#workers.keys()].map((route) => this.remove(route));
      await Promise.all([...all, ...this.#closing]);
    } finally {
      clearTimeout(grace);
    }
    for (const connection of [this.#pipelined, this.#direct]) {
      await connection.quit().catch(() => connection.disconnect());
    }
  }

  async #close(entry: RouteWorker): Promise<void> {
    try {
      await entry.worker.close();
    } catch (error) {
      this.logger.error(
        { route: entry.route, err: error },
        'delivery worker did not close cleanly',
      );
    }
    await entry.running;
    await entry.connection.quit().catch(() => entry.connection.disconnect());
  }
}
