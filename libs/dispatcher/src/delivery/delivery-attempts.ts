import { Inject, Injectable } from '@nestjs/common';
import type { RelaygramConfig } from '@relaygram/config';
import { AttemptOutcome, DeadReason } from '@relaygram/contracts';
import { MinuteStatsRecorder, type CountField } from '@relaygram/observability';
import {
  isSpreadLane,
  ownLane,
  type AttemptRecord,
  type ClaimedHead,
  type FinishOutcome,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { DISPATCHER_LOGGER } from '../dispatcher-options';
import { RouteFailureTracker } from '../health/route-failure-tracker';
import type { RouteRuntime } from '../routes/route-runtimes';
import {
  classifyAttempt,
  isExpired,
  type AttemptClass,
  type AttemptResult,
} from './attempt-classifier';
import { parseRetryAfter, retryDelay } from './backoff';
import { buildDeliveryRequest } from './delivery-request';
import { TargetClient, type TargetAnswer } from './target-client';
import { WebhookReplyExecutor } from './webhook-reply.executor';

/** A 2xx JSON reply body is parsed up to this size; larger ones are not replies. */
export const WEBHOOK_REPLY_LIMIT = 64 * 1024;

/** An answer the target gave (or failed to give): anything but a cut by shutdown. */
type Answer = Exclude<TargetAnswer, { kind: 'aborted' }>;

/** The fields every log line of one attempt carries. */
interface AttemptFields {
  bot: string;
  update_id: number;
  route: string;
  attempt: number;
  delivery_id: string;
}

/** One attempt on a lane's head, as each of its steps reads it. */
interface Attempt {
  readonly route: RouteRuntime;
  readonly head: ClaimedHead;
  readonly fields: AttemptFields;
  readonly startedAt: number;
}

/** How an attempt the target answered went: what the outcome step reads. */
interface Answered {
  readonly answer: Answer;
  /** The HTTP status, 0 without one (timeout, network error). */
  readonly status: number;
  readonly finishedAt: number;
  readonly ms: number;
}

/**
 * The outbound side of a delivery (SPEC section 5): one attempt on a lane's head, in
 * three steps: expire (past `max_age`, dead without sending), send, and the outcome
 * (delivered, with its webhook reply; dead; or retry with its backoff). It owns the
 * HTTP pools and the Bot API clients the attempts go through.
 */
@Injectable()
export class DeliveryAttempts {
  /**
   * Attempt lines hold only top-level numbers and config names, so the process
   * logger's path redaction (walked on every line) cannot change them: this child
   * skips it, on the hottest path. The logger's final text filter still applies.
   */
  readonly #logger: Logger;

  constructor(
    private readonly target: TargetClient,
    private readonly replies: WebhookReplyExecutor,
    private readonly stats: MinuteStatsRecorder,
    private readonly failures: RouteFailureTracker,
    @Inject(DISPATCHER_LOGGER) logger: Logger,
  ) {
    this.#logger = logger.child({}, { redact: { paths: [] } });
  }

  /** One attempt on the head; what its lane does with it, or 'aborted' by shutdown. */
  async attempt(route: RouteRuntime, head: ClaimedHead): Promise<FinishOutcome | 'aborted'> {
    const { entry } = head;
    const attempt: Attempt = {
      route,
      head,
      fields: {
        bot: entry.bot,
        update_id: entry.updateId,
        route: route.config.name,
        attempt: head.attempt,
        delivery_id: entry.deliveryId,
      },
      startedAt: Date.now(),
    };
    if (isExpired(entry, route.config.retry.maxAgeMs, attempt.startedAt)) {
      return this.#expire(attempt);
    }
    const answered = await this.#send(attempt);
    return answered === 'aborted' ? answered : this.#outcome(attempt, answered);
  }

  /** Shutdown: attempts in flight end as `aborted`, and no new one is made. */
  abortAll(): void {
    this.target.abortAll();
  }

  /** Keeps the HTTP pools of these origins only (after a reload removed routes). */
  retain(origins: ReadonlySet<string>): Promise<void> {
    return this.target.retain(origins);
  }

  /** The bots of a reloaded config, for webhook replies. */
  reload(config: RelaygramConfig): Promise<void> {
    return this.replies.replace(config);
  }

  async close(): Promise<void> {
    await Promise.all([this.target.close(), this.replies.close()]);
  }

  /** Past `max_age` before this attempt: dead without sending. */
  #expire({ route, head, fields, startedAt }: Attempt): FinishOutcome {
    const attempts = head.attempt - 1;
    countDead(route, attempts, DeadReason.Expired);
    this.#countMinute(route, head, 'dead', startedAt);
    this.#logger.warn(
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
      record: { status: null, error: DeadReason.Expired, durationMs: 0 },
    };
  }

  /** The POST to the target, unless shutdown cuts it short. */
  async #send({ route, head, fields, startedAt }: Attempt): Promise<Answered | 'aborted'> {
    const request = buildDeliveryRequest(head.entry, route.prepared, head.attempt);
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
      this.#logger.warn(
        { ...fields, status: 0, outcome: 'handed-back', ms },
        'delivery cut short by shutdown',
      );
      return 'aborted';
    }
    const status = answer.kind === 'response' ? answer.status : 0;
    return { answer, status, finishedAt, ms };
  }

  #outcome(attempt: Attempt, answered: Answered): Promise<FinishOutcome> | FinishOutcome {
    const { route, head } = attempt;
    const verdict = classifyAttempt(
      attemptResultOf(answered.answer),
      head.consecutive5xx,
      route.config.retry.maxConsecutive5xx,
    );
    switch (verdict.outcome) {
      case AttemptOutcome.Delivered:
        return this.#delivered(attempt, answered);
      case AttemptOutcome.Dead:
        return this.#dead(attempt, answered, verdict);
      default:
        return this.#retry(attempt, answered, verdict.consecutive5xx);
    }
  }

  /** 2xx: counted, and a webhook reply in the body done before the lane moves on. */
  async #delivered(
    { route, head, fields }: Attempt,
    { answer, status, finishedAt, ms }: Answered,
  ): Promise<FinishOutcome> {
    const { entry } = head;
    const latency = (finishedAt - entry.acceptedAt) / 1000;
    route.counters.delivered.inc();
    route.counters.latency.observe(latency);
    this.#countMinute(route, head, 'delivered', finishedAt);
    this.stats.latency('route', route.config.name, latency, finishedAt);
    this.stats.latency('bot', entry.bot, latency, finishedAt);
    this.failures.delivered(route.config.name);
    route.counters.attempts.observe(head.attempt);
    this.#logger.info({ ...fields, status, outcome: 'delivered', ms }, 'delivered');
    if (
      route.config.webhookReply &&
      answer.kind === 'response' &&
      answer.json &&
      answer.complete &&
      answer.body.length
    ) {
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
    return { kind: 'delivered', record: recordOf(answer, ms) };
  }

  #dead(
    { route, head, fields }: Attempt,
    { answer, status, finishedAt, ms }: Answered,
    verdict: Extract<AttemptClass, { outcome: AttemptOutcome.Dead }>,
  ): FinishOutcome {
    countDead(route, head.attempt, verdict.reason);
    this.#failed(route, head, answer, status, finishedAt);
    this.#countMinute(route, head, 'dead', finishedAt);
    this.#logger.warn(
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
      record: recordOf(answer, ms),
    };
  }

  /**
   * The head backs off in its lane; a spread lane's head (`none` ordering) in a lane of
   * its own, so the spread lane goes on.
   */
  #retry(
    { route, head, fields }: Attempt,
    { answer, status, finishedAt, ms }: Answered,
    consecutive5xx: number,
  ): FinishOutcome {
    const delay = retryDelay(
      head.attempt,
      route.config.retry.backoffCapMs,
      answer.kind === 'response' ? parseRetryAfter(answer.retryAfter, finishedAt) : undefined,
    );
    route.counters.retried.inc();
    this.#failed(route, head, answer, status, finishedAt);
    this.#logger.warn(
      { ...fields, status, outcome: 'retry', error: describe(answer), retry_in_ms: delay, ms },
      'delivery failed, will retry',
    );
    const retry = {
      consecutive5xx,
      lastStatus: status,
      lastError: describe(answer),
      lastBody: answerBody(answer),
      nextAttemptAt: finishedAt + delay,
    };
    const record = recordOf(answer, ms);
    return isSpreadLane(head.lane)
      ? { kind: 'detach', retry, ownLane: ownLane(head.lane, head.entry.deliveryId), record }
      : { kind: 'retry', retry, record };
  }

  /** A failed attempt: counted for the charts, and one more in the route's streak. */
  #failed(
    route: RouteRuntime,
    head: ClaimedHead,
    answer: Answer,
    status: number,
    at: number,
  ): void {
    this.#countMinute(route, head, 'failed', at);
    this.failures.failed(route.config.name, {
      status,
      error: describe(answer),
      body: answer.kind === 'response' ? answer.body : undefined,
      at,
    });
  }

  #countMinute(route: RouteRuntime, head: ClaimedHead, field: CountField, at: number): void {
    this.stats.count('route', route.config.name, field, 1, at);
    this.stats.count('bot', head.entry.bot, field, 1, at);
  }
}

function countDead(route: RouteRuntime, attempts: number, reason: DeadReason): void {
  route.counters.dead.inc();
  route.counters.deadLettered(reason);
  route.counters.attempts.observe(attempts);
}

function attemptResultOf(answer: Answer): AttemptResult {
  switch (answer.kind) {
    case 'response':
      return { kind: 'response', status: answer.status };
    case 'timeout':
      return { kind: 'timeout' };
    default:
      return { kind: 'network' };
  }
}

/** What the delivery log keeps of an attempt: its status or error kind, time and answer. */
function recordOf(answer: Answer, durationMs: number): AttemptRecord {
  switch (answer.kind) {
    case 'response':
      return { status: answer.status, error: null, durationMs, body: answer.body };
    case 'timeout':
      return { status: null, error: 'timeout', durationMs };
    default:
      return { status: null, error: answer.code, durationMs };
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
