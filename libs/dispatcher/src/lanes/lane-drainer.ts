import { Inject, Injectable } from '@nestjs/common';
import { JobName, OUTBOX_ROUTE, routeOfQueue } from '@relaygram/contracts';
import {
  DrainScheduler,
  type ClaimedHead,
  type DrainJobRef,
  type DrainResult,
  type LaneStore,
  type ThenWhat,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { DeliveryAttempts } from '../delivery/delivery-attempts';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import { OutboxSender } from '../outbox/outbox-sender';
import { RouteRuntimes } from '../routes/route-runtimes';
import type { QueueJob } from '../workers/job-processors';
import { DispatcherInbox } from './dispatcher-inbox';
import { DrainLocks } from './drain-locks';

/** The jobs of a route's delivery queue: drain jobs, and those of the engine before them. */
export type DrainingJob = QueueJob<JobName.Drain> | QueueJob<JobName.DrainLane>;

/** What a drain job's run reads of the dispatcher's options. */
type DrainSettings = Pick<
  ResolvedDispatcherOptions,
  'batchSize' | 'batchTimeMs' | 'lingerMs' | 'lifetimeMs' | 'dieAfterClaim' | 'dieAfterYield'
>;

/** One run of one drain job. */
interface DrainRun {
  ref: DrainJobRef;
  lanes: LaneStore;
  startedAt: number;
  /** Highest lane generation taken so far: a hand-off at or below it arrived late. */
  maxGen: number;
  /** The lane held, and how long and how much it has been drained in a row. */
  lane?: string;
  laneSince: number;
  laneDone: number;
}

/**
 * The drain job's processor (SPEC section 5, libs/queue/README.md). A drain job is a
 * lease on one of the route's worker slots: it claims a ready lane, delivers its head,
 * and in the same script that records the outcome takes the lane's next head or the
 * next ready lane, one script per delivery. With nothing ready it waits on the
 * process's inbox for a lane handed straight to it (`lingerMs`), then ends.
 *
 * - 2xx, or dead: the head is popped (dead into a dead letter).
 * - retry: the head backs off in its lane, which waits (in the route's delayed set)
 *   and only it; the job goes on with another lane. A spread lane's head (`none`
 *   ordering) backs off in a lane of its own instead, and the spread lane goes on.
 * - after `batchSize` deliveries or `batchTimeMs` on one lane, the lane goes to the
 *   tail of the ready list when another lane waits (fairness).
 * - `stale` at any step: the job lost its lock or the lane moved on (the reconciler,
 *   a re-run of this job elsewhere); the run stops without touching anything.
 *
 * Crash analysis: a kill at any point leaves the head in its lane with its attempt
 * counted and the lane recorded as the job's. The job's lock expires and BullMQ's
 * stalled check re-runs it (or the reconciler, if it failed for good, gives the lane
 * back to the route): the head is sent again, at-least-once, and no later delivery of
 * the lane goes before it. A run that was paused past its lock (SIGSTOP, a frozen VM)
 * checks its lock before its next send and stops. Errors (Redis away...) are thrown,
 * never swallowed: BullMQ re-runs the job, which takes back its lane.
 */
@Injectable()
export class LaneDrainer {
  #stopping = false;
  /** Without path redaction, as the attempts' lines (see DeliveryAttempts). */
  private readonly logger: Logger;

  constructor(
    private readonly routes: RouteRuntimes,
    private readonly attempts: DeliveryAttempts,
    private readonly outbox: OutboxSender,
    private readonly scheduler: DrainScheduler,
    private readonly inbox: DispatcherInbox,
    private readonly locks: DrainLocks,
    @Inject(DISPATCHER_LOGGER) logger: Logger,
    @Inject(DISPATCHER_OPTIONS) private readonly settings: DrainSettings,
  ) {
    this.logger = logger.child({}, { redact: { paths: [] } });
  }

  /** From now on, jobs hand their lanes on after the attempt in progress, and end. */
  stop(): void {
    this.#stopping = true;
    this.inbox.interruptAll();
  }

  /** Shutdown past its grace: attempts still in flight are cut; their lanes go on. */
  cutAttempts(): void {
    this.attempts.abortAll();
    this.outbox.abortAll();
  }

  async drain(job: DrainingJob, token: string | undefined, lanes: LaneStore): Promise<void> {
    const route = routeOfQueue(job.queueName);
    if (token === undefined || job.id === undefined || route === undefined) {
      throw new Error('a drain job runs only with its id, its lock token and a delivery queue');
    }
    const ref: DrainJobRef = {
      route,
      jobId: job.id,
      lock: token,
      lockKey: this.scheduler.lockKey(route, job.id),
    };
    if (job.name === JobName.DrainLane) await this.#adoptLegacy(job.data, lanes);
    const run: DrainRun = {
      ref,
      lanes,
      startedAt: Date.now(),
      maxGen: 0,
      laneSince: 0,
      laneDone: 0,
    };
    this.locks.track(ref);
    try {
      await this.#run(run);
    } finally {
      this.locks.untrack(ref.jobId);
      this.inbox.forget(ref.jobId);
    }
  }

  async #run(run: DrainRun): Promise<void> {
    let result = await run.lanes.start(run.ref, this.#waitOn(run));
    for (;;) {
      await this.#addJobs(result);
      const step = result.step;
      if (step.kind === 'stale') {
        this.logger.warn(
          { route: run.ref.route, job: run.ref.jobId },
          'drain job refused by Redis (lost lock or lane): it stops without touching anything',
        );
        return;
      }
      if (step.kind === 'end') return;
      if (step.kind === 'idle') {
        const handOff = await this.#waitForHandOff(run, step.until);
        result = handOff
          ? { step: { kind: 'head', ...handOff }, jobs: { arms: [], wakes: [] } }
          : await run.lanes.retire(run.ref);
        continue;
      }
      const next = await this.#deliverHead(run, step);
      if (next === undefined) return;
      result = next;
    }
  }

  /** One head: checks, the attempt, and the script that records it and goes on. */
  async #deliverHead(run: DrainRun, head: ClaimedHead): Promise<DrainResult | undefined> {
    if (head.gen > run.maxGen) run.maxGen = head.gen;
    if (run.lane !== head.lane) {
      run.lane = head.lane;
      run.laneSince = Date.now();
      run.laneDone = 0;
    }
    const route = this.routes.get(run.ref.route);
    // Removed by a reload, or shutting down: hand the lane on untouched (its attempt
    // was counted but never made; it is made wherever the lane goes next).
    if (!route || this.#stopping) {
      return run.lanes.finish(run.ref, head, { kind: 'none' }, 'stop');
    }
    // A run paused past its lock (or whose renewal failed) must not send: another run
    // may own the lane by now.
    if (!(await this.locks.stillHeld(run.ref, run.lanes))) {
      this.logger.warn(
        { route: run.ref.route, job: run.ref.jobId, lane: head.lane },
        'drain job lost its lock: it stops without sending',
      );
      return undefined;
    }

    const outcome =
      run.ref.route === OUTBOX_ROUTE
        ? await this.outbox.attempt(route, head)
        : await this.attempts.attempt(route, head);
    if (outcome === 'aborted') {
      // Shutdown cut the attempt: the lane goes to another job (another replica, or
      // this one after a restart), where the head is sent again.
      return run.lanes.finish(run.ref, head, { kind: 'none' }, 'stop');
    }
    run.laneDone += 1;
    const then = this.#then(run);
    const result = await run.lanes.finish(run.ref, head, outcome, then, this.#waitOn(run));
    this.#injectFaults(head, then, result);
    return result;
  }

  /** RELAYGRAM_FAULTS (chaos suite): die where a crash is hardest to get right. */
  #injectFaults(head: ClaimedHead, then: ThenWhat, result: DrainResult): void {
    const { dieAfterClaim, dieAfterYield } = this.settings;
    if (!dieAfterClaim && !dieAfterYield) return;
    const claimedOther = result.step.kind === 'head' && result.step.lane !== head.lane;
    if (
      (claimedOther && Math.random() < dieAfterClaim) ||
      (then === 'yield' && Math.random() < dieAfterYield)
    ) {
      this.logger.warn(
        { fault: claimedOther ? 'die_after_claim' : 'die_after_yield' },
        'RELAYGRAM_FAULTS: killing this process',
      );
      this.logger.flush?.();
      process.kill(process.pid, 'SIGKILL');
    }
  }

  #then(run: DrainRun): ThenWhat {
    const now = Date.now();
    if (
      this.#stopping ||
      !this.routes.get(run.ref.route) ||
      now - run.startedAt >= this.settings.lifetimeMs
    )
      return 'stop';
    if (run.laneDone >= this.settings.batchSize || now - run.laneSince >= this.settings.batchTimeMs)
      return 'yield';
    return 'continue';
  }

  /** The inbox a job with nothing ready waits on; none (end instead) when it should not wait. */
  #waitOn(run: DrainRun): string | undefined {
    if (this.#stopping || !this.inbox.present) return undefined;
    if (Date.now() - run.startedAt >= this.settings.lifetimeMs) return undefined;
    return this.inbox.id;
  }

  /**
   * A lane handed to the job while it waited, or undefined when the wait is over (the
   * linger, or the time the earliest backing-off lane of the route comes due).
   */
  async #waitForHandOff(run: DrainRun, due?: number): Promise<ClaimedHead | undefined> {
    // Until a backing-off lane comes due at the latest: the retire claims it then.
    const deadline = Math.min(Date.now() + this.settings.lingerMs, due ?? Infinity);
    for (;;) {
      const left = deadline - Date.now();
      if (this.#stopping || left <= 0) return undefined;
      const handOff = await this.inbox.wait(run.ref.jobId, left);
      if (!handOff) return undefined;
      // A hand-off the job already took through `retire` (it arrived late): wait on.
      if (handOff.head.gen > run.maxGen) return handOff.head;
    }
  }

  async #addJobs(result: DrainResult): Promise<void> {
    const { arms, wakes } = result.jobs;
    if (!arms.length && !wakes.length) return;
    try {
      await this.scheduler.add(result.jobs);
    } catch (error) {
      // The reconciler arms them again; the delivery work goes on meanwhile.
      this.logger.warn({ err: error }, 'drain jobs not added (the reconciler adds them)');
    }
  }

  /**
   * A `drain-lane` job of the engine before drain jobs: the lane it names is put back
   * where drain jobs find it (if nothing holds or lists it), then the job drains as any.
   */
  async #adoptLegacy(
    { lane }: QueueJob<JobName.DrainLane>['data'],
    lanes: LaneStore,
  ): Promise<void> {
    // Written by an older release: a job without a lane has nothing to put back.
    if (typeof lane !== 'string') return;
    const repaired = await lanes.repairLane(lane);
    await this.#addJobs({ step: { kind: 'end' }, jobs: repaired.jobs });
  }
}
