import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { deliveryQueueName } from '@relaygram/contracts';
import type { DrainScheduler } from '../lanes/drain-scheduler';
import type { ClaimedHead } from '../lanes/drain-script-io';
import {
  LaneStore,
  type DrainJobRef,
  type DrainResult,
  type FinishOutcome,
} from '../lanes/lane-store';
import type { QueueContext } from '../queue-context';

/** A drain job this driver took from BullMQ: its reference and the BullMQ job. */
export interface TakenDrainJob {
  ref: DrainJobRef;
  job: Job;
}

/**
 * Runs drain jobs by hand, as a dispatcher's worker would, for tests that need a head
 * finished a certain way without a dispatcher (a dead letter to list, a lane to watch).
 * The jobs are real BullMQ jobs taken with a lock token of their own (BullMQ's manual
 * processing), so the lane scripts' lock fence applies as in production.
 */
export class DrainJobDriver {
  readonly #workers = new Map<string, Worker>();
  readonly lanes: LaneStore;
  #connection?: Redis;

  constructor(
    private readonly ctx: QueueContext,
    private readonly scheduler: DrainScheduler,
  ) {
    this.lanes = new LaneStore(ctx);
  }

  /** The next waiting drain job of the route, taken with a fresh lock token; undefined when none waits. */
  async take(route: string): Promise<TakenDrainJob | undefined> {
    const token = randomUUID();
    const job = (await this.#worker(route).getNextJob(token, { block: false })) as Job | undefined;
    if (!job?.id) return undefined;
    return {
      job,
      ref: { route, jobId: job.id, lock: token, lockKey: this.scheduler.lockKey(route, job.id) },
    };
  }

  /**
   * The process running a taken job dies and BullMQ's stalled check puts the job back
   * in the wait list, its lock gone: the next `take` re-runs it with a new token, and
   * the old run is a zombie whose token fences nothing any more.
   */
  async crash(taken: TakenDrainJob): Promise<void> {
    await taken.job.moveToWait(taken.ref.lock);
  }

  /** Completes a taken job in BullMQ, as the worker does when its processor returns. */
  async complete(taken: TakenDrainJob): Promise<void> {
    await taken.job.moveToCompleted('done', taken.ref.lock, false);
  }

  /**
   * Takes the route's next drain job, finishes the first head it claims with `outcome`
   * and ends the job. Returns that head; throws when no job or no head was there.
   */
  async finishOne(
    route: string,
    outcome: (head: ClaimedHead) => FinishOutcome,
    now = Date.now(),
  ): Promise<ClaimedHead> {
    const taken = await this.take(route);
    if (!taken) throw new Error(`no drain job waits on route ${route}`);
    const started = await this.lanes.start(taken.ref);
    await this.scheduler.add(started.jobs);
    if (started.step.kind !== 'head') {
      throw new Error(`drain job ${taken.ref.jobId} got no head (${started.step.kind})`);
    }
    const head = started.step;
    const finished: DrainResult = await this.lanes.finish(
      taken.ref,
      head,
      outcome(head),
      'stop',
      undefined,
      now,
    );
    await this.scheduler.add(finished.jobs);
    await this.complete(taken);
    return head;
  }

  async close(): Promise<void> {
    const workers = [...this.#workers.values()];
    this.#workers.clear();
    await Promise.all(workers.map((worker) => worker.close(true)));
    this.#connection?.disconnect();
    this.#connection = undefined;
  }

  #worker(route: string): Worker {
    let worker = this.#workers.get(route);
    if (!worker) {
      // BullMQ wants a worker's connection to wait for Redis, not fail fast. Tests run
      // on one Redis server, not a cluster.
      this.#connection ??= (this.ctx.redis as Redis).duplicate({ maxRetriesPerRequest: null });
      worker = new Worker(deliveryQueueName(route), null, {
        connection: this.#connection,
        prefix: this.ctx.keys.bullPrefix,
        autorun: false,
        skipVersionCheck: true,
      });
      worker.on('error', () => undefined);
      this.#workers.set(route, worker);
    }
    return worker;
  }
}
