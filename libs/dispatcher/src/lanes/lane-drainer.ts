import type { Job } from 'bullmq';
import { AttemptOutcome, DeadReason, JobName, routeOfQueue } from '@relaygram/contracts';
import {
  isSpreadLane,
  ownLane,
  type ClaimedHead,
  type DrainJobRef,
  type DrainResult,
  type DrainScheduler,
  type FinishOutcome,
  type LaneStore,
  type ThenWhat,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { classifyAttempt, isExpired, type AttemptResult } from '../delivery/attempt-classifier';
import { parseRetryAfter, retryDelay } from '../delivery/backoff';
import { buildDeliveryRequest } from '../delivery/delivery-request';
import type { TargetAnswer, TargetClient } from '../delivery/target-client';
import type { WebhookReplyExecutor } from '../delivery/webhook-reply.executor';
import type { RouteRuntime, RouteRuntimes } from '../routes/route-runtimes';
import type { DispatcherInbox } from './dispatcher-inbox';
import type { DrainLocks } from './drain-locks';

/** A 2xx JSON reply body is parsed up to this size; larger ones are not replies. */
export const WEBHOOK_REPLY_LIMIT = 64 * 1024;

export interface LaneDrainerSettings {
  /** A lane is handed on (if another waits) after this many deliveries in a row... */
  batchSize: number;
  /** ...or this long, so one busy lane cannot keep others from a worker slot. */
  batchTimeMs: number;
  /** How long a job with nothing ready waits for a hand-off before it ends. */
  lingerMs: number;
  /** A job ends after this long (handing its lane on), so locks and memory stay fresh. */
  lifetimeMs: number;
  /** Chaos suite only: probability of a SIGKILL right after claiming another lane / yielding. */
  dieAfterClaim: number;
  dieAfterYield: number;
}

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
export class LaneDrainer {
  #stopping = false;

  constructor(
    private readonly routes: RouteRuntimes,
    private readonly target: TargetClient,
    private readonly replies: WebhookReplyExecutor,
    private readonly scheduler: DrainScheduler,
    private readonly inbox: DispatcherInbox,
    private readonly locks: DrainLocks,
    private readonly logger: Logger,
    private readonly settings: LaneDrainerSettings,
  ) {}

  /** From now on, jobs hand their lanes on after the attempt in progress, and end. */
  stop(): void {
    this.#stopping = true;
    this.inbox.interruptAll();
  }

  async drain(job: Job, token: string | undefined, lanes: LaneStore): Promise<void> {
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
    if (job.name === JobName.DrainLane) await this.#adoptLegacy(job, lanes);
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

    const outcome = await this.#attempt(route, head);
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
  async #adoptLegacy(job: Job, lanes: LaneStore): Promise<void> {
    const lane = (job.data as { lane?: unknown }).lane;
    if (typeof lane !== 'string') return;
    const repaired = await lanes.repairLane(lane);
    await this.#addJobs({ step: { kind: 'end' }, jobs: repaired.jobs });
  }

  /** One attempt on the head; what the lane does with it, or 'aborted' by shutdown. */
  async #attempt(route: RouteRuntime, head: ClaimedHead): Promise<FinishOutcome | 'aborted'> {
    const { entry } = head;
    const fields = {
      bot: entry.bot,
      update_id: entry.updateId,
      route: route.config.name,
      attempt: head.attempt,
      delivery_id: entry.deliveryId,
    };
    const startedAt = Date.now();
    if (isExpired(entry, route.config.retry.maxAgeMs, startedAt)) {
      return this.#expired(route, head, fields);
    }

    const request = buildDeliveryRequest(entry, route.prepared, head.attempt);
    const answer = await this.target.send({
      origin: route.origin,
      path: route.path,
      headers: request.headers,
      body: request.body,
      timeoutMs: route.config.timeoutMs,
      replyLimit: route.config.webhookReply ? WEBHOOK_REPLY_LIMIT : 0,
    });
    const finishedAt = Date.now();
    const ms = finishedAt - startedAt;
    if (answer.kind === 'aborted') {
      this.logger.warn(
        { ...fields, status: 0, outcome: 'handed-back', ms },
        'delivery cut short by shutdown',
      );
      return 'aborted';
    }
    return this.#outcome(route, head, answer, { fields, finishedAt, ms });
  }

  #expired(route: RouteRuntime, head: ClaimedHead, fields: Record<string, unknown>): FinishOutcome {
    const attempts = head.attempt - 1;
    this.#dead(route, attempts, DeadReason.Expired);
    this.logger.warn(
      {
        ...fields,
        attempt: attempts,
        status: head.lastStatus ?? 0,
        outcome: 'dead',
        reason: DeadReason.Expired,
      },
      'delivery expired (max_age) before its next attempt',
    );
    return {
      kind: 'dead',
      dead: {
        reason: DeadReason.Expired,
        attempts,
        lastStatus: head.lastStatus,
        lastBody: head.lastBody || undefined,
        lastError: head.lastError || undefined,
      },
    };
  }

  async #outcome(
    route: RouteRuntime,
    head: ClaimedHead,
    answer: Exclude<TargetAnswer, { kind: 'aborted' }>,
    timing: { fields: Record<string, unknown>; finishedAt: number; ms: number },
  ): Promise<FinishOutcome> {
    const { entry } = head;
    const { fields, finishedAt, ms } = timing;
    const status = answer.kind === 'response' ? answer.status : 0;
    const verdict = classifyAttempt(
      attemptResultOf(answer),
      head.consecutive5xx,
      route.config.retry.maxConsecutive5xx,
    );
    switch (verdict.outcome) {
      case AttemptOutcome.Delivered: {
        route.counters.delivered.inc();
        route.counters.latency.observe((finishedAt - entry.acceptedAt) / 1000);
        route.counters.attempts.observe(head.attempt);
        this.logger.info({ ...fields, status, outcome: 'delivered', ms }, 'delivered');
        if (answer.kind === 'response' && answer.json && answer.complete && answer.body.length) {
          await this.replies.execute(
            {
              route: route.config.name,
              bot: entry.bot,
              updateId: entry.updateId,
              deliveryId: entry.deliveryId,
            },
            answer.body,
          );
        }
        return { kind: 'delivered' };
      }
      case AttemptOutcome.Dead: {
        this.#dead(route, head.attempt, verdict.reason);
        this.logger.warn(
          { ...fields, status, outcome: 'dead', reason: verdict.reason, ms },
          verdict.reason === DeadReason.Poison
            ? 'delivery dead: too many consecutive 5xx (max_consecutive_5xx)'
            : 'delivery rejected by the target',
        );
        return {
          kind: 'dead',
          dead: {
            reason: verdict.reason,
            attempts: head.attempt,
            lastStatus: status,
            lastBody: answerBody(answer),
            lastError: describe(answer),
          },
        };
      }
      default: {
        const delay = retryDelay(
          head.attempt,
          route.config.retry.backoffCapMs,
          answer.kind === 'response' ? parseRetryAfter(answer.retryAfter, finishedAt) : undefined,
        );
        route.counters.retried.inc();
        this.logger.warn(
          { ...fields, status, outcome: 'retry', error: describe(answer), retry_in_ms: delay, ms },
          'delivery failed, will retry',
        );
        const retry = {
          consecutive5xx: verdict.consecutive5xx,
          lastStatus: status,
          lastError: describe(answer),
          lastBody: answerBody(answer),
          nextAttemptAt: finishedAt + delay,
        };
        return isSpreadLane(head.lane)
          ? { kind: 'detach', retry, ownLane: ownLane(head.lane, entry.deliveryId) }
          : { kind: 'retry', retry };
      }
    }
  }

  #dead(route: RouteRuntime, attempts: number, reason: DeadReason): void {
    route.counters.dead.inc();
    route.counters.deadLettered(reason);
    route.counters.attempts.observe(attempts);
  }
}

function attemptResultOf(answer: Exclude<TargetAnswer, { kind: 'aborted' }>): AttemptResult {
  switch (answer.kind) {
    case 'response':
      return { kind: 'response', status: answer.status };
    case 'timeout':
      return { kind: 'timeout' };
    default:
      return { kind: 'network' };
  }
}

function answerBody(answer: TargetAnswer): string | undefined {
  return answer.kind === 'response' && answer.body.length
    ? answer.body.toString('utf8')
    : undefined;
}

/** A short reason for logs and dead letters: never a URL (a query may hold a key). */
function describe(answer: TargetAnswer): string {
  switch (answer.kind) {
    case 'response':
      return `HTTP ${answer.status}`;
    case 'timeout':
      return 'timeout';
    case 'network':
      return `network error ${answer.code}`;
    default:
      return 'aborted';
  }
}
