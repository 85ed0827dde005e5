import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import {
  DRAIN_LOCK_DURATION_MS,
  DRAIN_MAX_STALLED_COUNT,
  JobName,
  QueueName,
  deliveryQueueName,
  type DrainLaneJob,
} from '@relaygram/contracts';
import {
  LaneStore,
  createRedis,
  queueContext,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import type { LaneDrainer } from '../lanes/lane-drainer';
import { processorFor, type JobHandler } from './job-processors';

interface RouteWorker {
  route: string;
  /** Lanes of a strict route are drained one at a time: no pipelining to gain. */
  strict: boolean;
  worker: Worker<DrainLaneJob>;
  /** BullMQ's connection for this route's worker (it blocks on a duplicate of it). */
  connection: RelaygramRedis;
  running: Promise<void>;
}

export interface DeliveryWorkersSettings {
  redisUrl: string;
  stalledIntervalMs: number;
}

/**
 * One BullMQ worker per route, on the route's own queue, with `concurrency` slots per
 * replica: a slow or failing route fills only its own slots (SPEC section 5). Locks
 * last DRAIN_LOCK_DURATION_MS and are renewed while a job runs; a dead replica's jobs
 * are re-run after the lock expires, up to DRAIN_MAX_STALLED_COUNT times.
 */
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

  constructor(
    private readonly ctx: QueueContext,
    private readonly drainer: LaneDrainer,
    private readonly logger: Logger,
    private readonly settings: DeliveryWorkersSettings,
  ) {
    const lanesConnection = (autoPipelining: boolean) => {
      const connection = createRedis(settings.redisUrl, {
        mode: 'blocking',
        connectionName: `relaygram-dispatcher-lanes${autoPipelining ? '-pipelined' : ''}`,
        autoPipelining,
      });
      connection.on('error', () => undefined);
      return connection;
    };
    this.#pipelined = lanesConnection(true);
    this.#direct = lanesConnection(false);
    this.#pipelinedLanes = new LaneStore(queueContext(this.#pipelined, ctx.keys.prefix));
    this.#directLanes = new LaneStore(queueContext(this.#direct, ctx.keys.prefix));
  }

  routes(): string[] {
    return [...this.#workers.keys()];
  }

  /** Starts a worker for the route, or updates the one it has (slots, ordering). */
  ensure(route: string, concurrency: number, strict: boolean): void {
    const existing = this.#workers.get(route);
    if (existing) {
      if (existing.worker.concurrency !== concurrency) existing.worker.concurrency = concurrency;
      existing.strict = strict;
      return;
    }
    const connection = createRedis(this.settings.redisUrl, {
      mode: 'blocking',
      connectionName: `relaygram-dispatcher-${route}`,
    });
    const drainLane: JobHandler<JobName.DrainLane> = (job, token) =>
      this.drainer.drain(job, token, entry.strict ? this.#directLanes : this.#pipelinedLanes);
    const processor = processorFor(QueueName.Delivery, {
      [JobName.DrainLane]: drainLane as JobHandler<JobName>,
    });
    const worker = new Worker<DrainLaneJob>(
      deliveryQueueName(route),
      (job: Job<DrainLaneJob>, token?: string) => processor(job, token),
      {
        connection,
        prefix: this.ctx.keys.bullPrefix,
        name: this.#workerName,
        concurrency,
        lockDuration: DRAIN_LOCK_DURATION_MS,
        maxStalledCount: DRAIN_MAX_STALLED_COUNT,
        stalledInterval: this.settings.stalledIntervalMs,
        autorun: false,
        // Not skipVersionCheck: without the version BullMQ assumes a Redis that blocks
        // in whole seconds, and delayed retries wake up to a second late.
      },
    );
    worker.on('error', (error) =>
      this.logger.error({ route, error: error.message }, 'delivery worker error'),
    );
    worker.on('failed', (job, error) =>
      this.logger.error(
        { route, lane: job?.data.lane, attempts: job?.attemptsMade, error: error.message },
        'drain job failed',
      ),
    );
    connection.on('error', () => undefined);
    const running = worker.run().catch((error: unknown) => {
      this.logger.error(
        { route, error: error instanceof Error ? error.message : String(error) },
        'delivery worker stopped',
      );
    });
    const entry: RouteWorker = { route, strict, worker, connection, running };
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

  async close(): Promise<void> {
    const all = [...this.#workers.keys()].map((route) => this.remove(route));
    await Promise.all([...all, ...this.#closing]);
    for (const connection of [this.#pipelined, this.#direct]) {
      await connection.quit().catch(() => connection.disconnect());
    }
  }

  async #close(entry: RouteWorker): Promise<void> {
    try {
      await entry.worker.close();
    } catch (error) {
      this.logger.error(
        { route: entry.route, error: error instanceof Error ? error.message : String(error) },
        'delivery worker did not close cleanly',
      );
    }
    await entry.running;
    await entry.connection.quit().catch(() => entry.connection.disconnect());
  }
}
