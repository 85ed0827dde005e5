import { DelayedError, type Job } from 'bullmq';
import { AttemptOutcome, DeadReason, parseLaneId, type DrainLaneJob } from '@relaygram/contracts';
import {
  isSpreadLane,
  ownLane,
  type DeadLetterInfo,
  type DrainScheduler,
  type FinishResult,
  type LaneHead,
  type LaneStore,
  type RetryInfo,
  type ThenWhat,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { classifyAttempt, isExpired, type AttemptResult } from '../delivery/attempt-classifier';
import { parseRetryAfter, retryDelay } from '../delivery/backoff';
import { buildDeliveryRequest } from '../delivery/delivery-request';
import type { TargetAnswer, TargetClient } from '../delivery/target-client';
import type { WebhookReplyExecutor } from '../delivery/webhook-reply.executor';
import type { RouteRuntime, RouteRuntimes } from '../routes/route-runtimes';

/** A 2xx JSON reply body is parsed up to this size; larger ones are not replies. */
export const WEBHOOK_REPLY_LIMIT = 64 * 1024;

export interface LaneDrainerSettings {
  batchSize: number;
  batchTimeMs: number;
}

type Finish = { delivered: true } | { delivered: false; dead: DeadLetterInfo };

/** What to do with the head after an attempt. */
type Step =
  | { kind: 'finish'; finish: Finish }
  /** A spread lane's head to retry: it moves to a lane of its own, the lane goes on. */
  | { kind: 'detach'; retry: RetryInfo };

/**
 * The drain job's processor: it delivers the head of its lane, then the next, one at a
 * time, while its job holds the lane's generation (SPEC section 5, libs/queue/README.md).
 *
 * - 2xx, or dead: `finish` pops the head and, in the same script, begins the next one,
 *   so a lane costs one Redis script per delivery in steady state. After `batchSize`
 *   deliveries or `batchTimeMs` the lane is yielded to a new drain job instead, so a
 *   busy lane cannot hold a worker slot while other lanes wait.
 * - retry: the attempt is recorded with the lane (count, last answer, next time) and the
 *   job is moved to BullMQ's delayed set; the lane waits, and only this lane. In a
 *   spread lane (`none` ordering) the head moves to a lane of its own instead, with a
 *   delayed job, and the spread lane goes on at once: retries overtake.
 * - `stale` at any step: a newer job owns the lane (the reconciler replaced this one);
 *   this job stops without touching it.
 *
 * Crash analysis: a kill at any point leaves the head in its lane with its attempt
 * counted; the job's lock expires and BullMQ's stalled check (or the reconciler) runs
 * the lane again, which re-sends the head: at-least-once, and no later delivery of the
 * lane is sent before it. Errors (Redis away...) are thrown, never swallowed: BullMQ
 * retries the job, and the reconciler restarts a lane whose job failed for good.
 */
export class LaneDrainer {
  #stopping = false;

  constructor(
    private readonly routes: RouteRuntimes,
    private readonly target: TargetClient,
    private readonly replies: WebhookReplyExecutor,
    private readonly scheduler: DrainScheduler,
    private readonly logger: Logger,
    private readonly settings: LaneDrainerSettings,
  ) {}

  /** From now on, lanes are handed back after the attempt in progress. */
  stop(): void {
    this.#stopping = true;
  }

  async drain(job: Job<DrainLaneJob>, token: string | undefined, lanes: LaneStore): Promise<void> {
    const { lane, gen } = job.data;
    const routeName = parseLaneId(lane).route;
    const spread = isSpreadLane(lane);
    const begun = await lanes.begin(lane, gen);
    if (begun.kind === 'wait') return this.#delay(job, token, begun.nextAttemptAt);
    if (begun.kind !== 'head') return;
    let head: LaneHead = begun;
    const started = Date.now();
    let done = 0;

    for (;;) {
      const route = this.routes.get(routeName);
      // Removed by a reload: the lane keeps its generation with no job, so the reconciler
      // restarts it wherever the route is still served, or moves it to dead letters.
      if (!route) return;
      // Shutdown began while this head was taken (its attempt already counted): hand
      // the lane over rather than start a new attempt.
      if (this.#stopping) return this.#handBack(lanes, routeName, lane, gen);

      const step = await this.#attempt(job, token, lanes, route, lane, gen, head, spread);
      if (step === undefined) return;

      done += 1;
      const then: ThenWhat = !this.routes.get(routeName)
        ? 'hold'
        : this.#stopping ||
            done >= this.settings.batchSize ||
            Date.now() - started >= this.settings.batchTimeMs
          ? 'yield'
          : 'continue';
      let next: FinishResult;
      if (step.kind === 'detach') {
        const own = ownLane(lane, head.entry.deliveryId);
        const moved = await lanes.detach(lane, gen, head.entry.deliveryId, own, step.retry, then);
        if (moved.kind === 'stale') return;
        // A crash before this add leaves the own lane without a job: the reconciler adds
        // one, and it waits out the backoff (`begin` answers `wait`).
        if (moved.ownGen !== undefined) {
          await this.scheduler.schedule([
            { route: routeName, lane: own, gen: moved.ownGen, notBefore: step.retry.nextAttemptAt },
          ]);
        }
        next = moved.next;
      } else {
        next = await lanes.finish(lane, gen, head.entry.deliveryId, step.finish, then);
      }
      switch (next.kind) {
        case 'head':
          head = next;
          continue;
        case 'yield':
          // A crash before this add leaves the new generation without a job: the
          // reconciler adds it.
          await this.scheduler.schedule([{ route: routeName, lane, gen: next.gen }]);
          return;
        default:
          return;
      }
    }
  }

  /**
   * One attempt on the head. Returns what to do with it, or undefined when the job is
   * done with the lane (moved to delayed, handed back, or stale).
   */
  async #attempt(
    job: Job<DrainLaneJob>,
    token: string | undefined,
    lanes: LaneStore,
    route: RouteRuntime,
    lane: string,
    gen: number,
    head: LaneHead,
    spread: boolean,
  ): Promise<Step | undefined> {
    const { entry } = head;
    const { retry } = route.config;
    const fields = {
      bot: entry.bot,
      update_id: entry.updateId,
      route: route.config.name,
      attempt: head.attempt,
      delivery_id: entry.deliveryId,
    };
    const startedAt = Date.now();

    if (isExpired(entry, retry.maxAgeMs, startedAt)) {
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
        kind: 'finish',
        finish: {
          delivered: false,
          dead: {
            reason: DeadReason.Expired,
            attempts,
            lastStatus: head.lastStatus,
            lastBody: head.lastBody || undefined,
            lastError: head.lastError || undefined,
          },
        },
      };
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
      // Shutdown cut the attempt: hand the lane to a new job (another replica, or this
      // one after a restart); the head is sent again there.
      this.logger.warn(
        { ...fields, status: 0, outcome: 'handed-back', ms },
        'delivery cut short by shutdown',
      );
      await this.#handBack(lanes, route.config.name, lane, gen);
      return undefined;
    }

    const result = attemptResultOf(answer);
    const status = answer.kind === 'response' ? answer.status : 0;
    const verdict = classifyAttempt(result, head.consecutive5xx, retry.maxConsecutive5xx);

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
        return { kind: 'finish', finish: { delivered: true } };
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
          kind: 'finish',
          finish: {
            delivered: false,
            dead: {
              reason: verdict.reason,
              attempts: head.attempt,
              lastStatus: status,
              lastBody: answerBody(answer),
              lastError: describe(answer),
            },
          },
        };
      }
      default: {
        const delay = retryDelay(
          head.attempt,
          retry.backoffCapMs,
          answer.kind === 'response' ? parseRetryAfter(answer.retryAfter, finishedAt) : undefined,
        );
        const nextAttemptAt = finishedAt + delay;
        route.counters.retried.inc();
        this.logger.warn(
          { ...fields, status, outcome: 'retry', error: describe(answer), retry_in_ms: delay, ms },
          'delivery failed, will retry',
        );
        const retryInfo: RetryInfo = {
          consecutive5xx: verdict.consecutive5xx,
          lastStatus: status,
          lastError: describe(answer),
          lastBody: answerBody(answer),
          nextAttemptAt,
        };
        if (spread) return { kind: 'detach', retry: retryInfo };
        if (!(await lanes.retry(lane, gen, retryInfo))) return undefined;
        return this.#delay(job, token, nextAttemptAt);
      }
    }
  }

  /** Gives the lane to a new generation and job, for another replica or a restart. */
  async #handBack(lanes: LaneStore, route: string, lane: string, gen: number): Promise<void> {
    const next = await lanes.reschedule(lane, gen);
    if (next !== undefined) await this.scheduler.schedule([{ route, lane, gen: next }]);
  }

  /** Parks the job until `at`; the lane waits with it. Throws BullMQ's DelayedError. */
  async #delay(job: Job<DrainLaneJob>, token: string | undefined, at: number): Promise<never> {
    if (token === undefined)
      throw new Error('a drain job cannot be delayed without its lock token');
    await job.moveToDelayed(at, token);
    throw new DelayedError();
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
