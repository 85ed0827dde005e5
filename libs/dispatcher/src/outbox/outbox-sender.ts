import { Inject, Injectable } from '@nestjs/common';
import { ConfigService, type BotConfig, type RelaygramConfig } from '@relaygram/config';
import { DeadReason, errorMessage, type OutboxCall } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { OutboundPacer, countPace, reportTelegram429 } from '@relaygram/pacing';
import {
  OutboxStore,
  type AttemptRecord,
  type ClaimedHead,
  type FinishOutcome,
  type OutboxSettlement,
} from '@relaygram/queue';
import {
  TelegramAbortError,
  TelegramError,
  TelegramTimeoutError,
  TelegramNetworkError,
  type TelegramClient,
} from '@relaygram/telegram';
import type { Logger } from 'pino';
import { isExpired } from '../delivery/attempt-classifier';
import { DISPATCHER_LOGGER } from '../dispatcher-options';
import { BotClients } from '../telegram/bot-clients';
import type { RouteRuntime } from '../routes/route-runtimes';
import { classifyOutboxCall, outboxRetryDelay, type OutboxCallResult } from './outbox-classifier';

/** One call to Telegram, as far as it went. */
interface Called {
  result: OutboxCallResult;
  /** Telegram's `result` of an ok answer, as JSON text. */
  value?: string;
  /** The chat the send went to after a group became a supergroup. */
  migratedTo?: string;
  ms: number;
}

/** The fields every log line of one outbox attempt carries. */
interface SendFields {
  bot: string;
  route: string;
  attempt: number;
  outbox_id: string;
  method?: string;
}

/**
 * One attempt on an outbox send (issue 16), the outbox route's counterpart of
 * DeliveryAttempts: the Bot API call through the bot's pacing, Telegram's answer
 * classified (classifyOutboxCall), the send's record updated, and the lane told what
 * to do (pop it, or back off). A group that became a supergroup is followed once, in
 * the same attempt. Nothing here is retried in-process: the lane engine does it, so a
 * crash at any point leaves the send at its lane's head (at-least-once: a send whose
 * answer was lost goes again).
 */
@Injectable()
export class OutboxSender {
  readonly #bots: BotClients;
  readonly #inFlight = new Set<AbortController>();
  readonly #logger: Logger;

  constructor(
    @Inject(ConfigService) { config }: Pick<ConfigService, 'config'>,
    private readonly store: OutboxStore,
    private readonly pacer: OutboundPacer,
    private readonly metrics: RelaygramMetrics,
    @Inject(DISPATCHER_LOGGER) logger: Logger,
  ) {
    this.#logger = logger.child({}, { redact: { paths: [] } });
    this.#bots = new BotClients(config, metrics, this.#logger, {
      user: 'outbox sends',
      connections: 8,
    });
  }

  async attempt(route: RouteRuntime, head: ClaimedHead): Promise<FinishOutcome | 'aborted'> {
    const { entry } = head;
    const fields: SendFields = {
      bot: entry.bot,
      route: route.config.name,
      attempt: head.attempt,
      outbox_id: entry.deliveryId,
    };
    if (isExpired(entry, route.config.retry.maxAgeMs, Date.now())) {
      const hours = Math.round(route.config.retry.maxAgeMs / 3_600_000);
      return this.#failed(route, head, fields, {
        reason: DeadReason.Expired,
        description: `not sent within ${hours} h (Telegram unreachable or the bot paused)`,
        attempts: head.attempt - 1,
      });
    }
    const call = parseCall(entry.body);
    if (!call) {
      return this.#failed(route, head, fields, {
        reason: DeadReason.Rejected,
        description: 'the stored send is not a Bot API call',
      });
    }
    fields.method = call.method;
    const bot = this.#bots.bot(entry.bot);
    const client = this.#bots.client(entry.bot);
    if (!bot || !client) {
      return this.#failed(route, head, fields, {
        reason: DeadReason.Rejected,
        description: 'the bot is no longer configured',
      });
    }
    const called = await this.#call(bot, client, call, route.config.timeoutMs);
    if (called === 'aborted') {
      this.#logger.warn({ ...fields, outcome: 'handed-back' }, 'outbox send cut short by shutdown');
      return 'aborted';
    }
    return this.#outcome(route, head, fields, called);
  }

  /** Telegram's answer, classified: the record updated, and what the lane does next. */
  async #outcome(
    route: RouteRuntime,
    head: ClaimedHead,
    fields: SendFields,
    called: Called,
  ): Promise<FinishOutcome> {
    const { entry } = head;
    const verdict = classifyOutboxCall(called.result);
    const record = recordOf(called);
    switch (verdict.outcome) {
      case 'sent':
        await this.#settle(entry.bot, entry.deliveryId, {
          status: 'sent',
          attempts: head.attempt,
          result: called.value ?? 'true',
          migratedTo: called.migratedTo,
        });
        route.counters.delivered.inc();
        route.counters.latency.observe((Date.now() - entry.acceptedAt) / 1000);
        route.counters.attempts.observe(head.attempt);
        this.#logger.info({ ...fields, outcome: 'sent', ms: called.ms }, 'outbox send made');
        return { kind: 'delivered', record };
      case 'failed':
        return this.#failed(route, head, fields, {
          reason: DeadReason.Rejected,
          errorCode: verdict.errorCode,
          description: verdict.description,
          record,
        });
      case 'retry': {
        const at = Date.now();
        const delay = outboxRetryDelay(verdict, head.attempt, route.config.retry.backoffCapMs);
        const lastError = describe(called.result);
        await this.#settle(entry.bot, entry.deliveryId, {
          status: 'queued',
          attempts: head.attempt,
          lastError,
          nextAttemptAt: at + delay,
        });
        route.counters.retried.inc();
        this.#logger.warn(
          { ...fields, outcome: 'retry', error: lastError, retry_in_ms: delay, ms: called.ms },
          'outbox send not made, will retry',
        );
        return {
          kind: 'retry',
          retry: {
            consecutive5xx: 0,
            lastStatus: statusOf(called.result),
            lastError,
            nextAttemptAt: at + delay,
          },
          record,
        };
      }
    }
  }

  /** Shutdown: calls in flight end as `aborted`, and their sends stay at their lanes' heads. */
  abortAll(): void {
    for (const controller of this.#inFlight) controller.abort();
  }

  /** The bots of a reloaded config. */
  reload(config: RelaygramConfig): Promise<void> {
    return this.#bots.reload(config);
  }

  close(): Promise<void> {
    return this.#bots.close();
  }

  async #call(
    bot: BotConfig,
    client: TelegramClient,
    call: OutboxCall,
    timeoutMs: number,
  ): Promise<Called | 'aborted'> {
    const started = Date.now();
    const first = await this.#callOnce(bot, client, call, timeoutMs);
    if (first === 'aborted') return first;
    const migrateTo = first.migrateTo;
    if (migrateTo === undefined) return { ...first, ms: Date.now() - started };
    // The group became a supergroup: the send goes there, once.
    const moved = { method: call.method, params: { ...call.params, chat_id: migrateTo } };
    const second = await this.#callOnce(bot, client, moved, timeoutMs);
    if (second === 'aborted') return second;
    return { ...second, migratedTo: String(migrateTo), ms: Date.now() - started };
  }

  async #callOnce(
    bot: BotConfig,
    client: TelegramClient,
    { method, params }: OutboxCall,
    timeoutMs: number,
  ): Promise<{ result: OutboxCallResult; value?: string; migrateTo?: number } | 'aborted'> {
    const pace = await this.pacer.acquire(bot, method, params);
    countPace(this.metrics, bot.id, pace);
    if (pace.kind === 'refused') return { result: { kind: 'paced', retryAfter: pace.retryAfter } };
    if (pace.kind === 'aborted') return 'aborted';
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      const value = await client.call(method, params, { timeoutMs, signal: controller.signal });
      return { result: { kind: 'ok' }, value: JSON.stringify(value) };
    } catch (error) {
      if (error instanceof TelegramAbortError) return 'aborted';
      if (error instanceof TelegramTimeoutError) return { result: { kind: 'timeout' } };
      if (error instanceof TelegramError) {
        if (error.errorCode === 429 && pace.kind === 'go') {
          await reportTelegram429(this.pacer, this.metrics, bot, pace.plan, error.retryAfter);
        }
        return {
          result: {
            kind: 'error',
            errorCode: error.errorCode,
            description: error.description,
            retryAfter: error.retryAfter,
          },
          migrateTo: error.migrateToChatId,
        };
      }
      if (!(error instanceof TelegramNetworkError)) {
        this.#logger.warn(
          { bot: bot.id, method, error: errorMessage(error) },
          'outbox call failed',
        );
      }
      return { result: { kind: 'network' } };
    } finally {
      this.#inFlight.delete(controller);
    }
  }

  /** The send ends without going out: its record says why, and it becomes a dead letter. */
  async #failed(
    route: RouteRuntime,
    head: ClaimedHead,
    fields: SendFields,
    failure: {
      reason: DeadReason;
      description: string;
      errorCode?: number;
      attempts?: number;
      record?: AttemptRecord;
    },
  ): Promise<FinishOutcome> {
    const attempts = failure.attempts ?? head.attempt;
    await this.#settle(head.entry.bot, head.entry.deliveryId, {
      status: 'failed',
      attempts,
      errorCode: failure.errorCode,
      description: failure.description,
    });
    route.counters.dead.inc();
    route.counters.deadLettered(failure.reason);
    route.counters.attempts.observe(attempts);
    this.#logger.warn(
      { ...fields, outcome: 'failed', reason: failure.reason, error_code: failure.errorCode },
      `outbox send failed: ${failure.description}`,
    );
    return {
      kind: 'dead',
      dead: {
        reason: failure.reason,
        attempts,
        lastStatus: failure.errorCode,
        lastError: failure.description,
      },
      record: failure.record ?? { status: null, error: failure.reason, durationMs: 0 },
    };
  }

  /**
   * The record follows the lane, never the other way: a record write that fails is
   * logged and the lane goes on, since the send itself went (or did not) already.
   */
  async #settle(bot: string, id: string, settlement: OutboxSettlement): Promise<void> {
    try {
      await this.store.settle(bot, id, settlement);
    } catch (error) {
      this.#logger.warn(
        { bot, outbox_id: id, status: settlement.status, err: error },
        'outbox record not updated',
      );
    }
  }
}

function parseCall(body: Buffer): OutboxCall | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as Partial<OutboxCall>;
    if (typeof value.method !== 'string' || typeof value.params !== 'object' || !value.params) {
      return undefined;
    }
    return { method: value.method, params: value.params };
  } catch {
    return undefined;
  }
}

function statusOf(result: OutboxCallResult): number {
  return result.kind === 'error' ? result.errorCode : result.kind === 'paced' ? 429 : 0;
}

/** A short reason for the record and the logs (never a URL: it holds the token). */
function describe(result: OutboxCallResult): string {
  switch (result.kind) {
    case 'ok':
      return 'ok';
    case 'error':
      return `${result.errorCode} ${result.description}`;
    case 'paced':
      return `no slot in the bot's budget within max_wait (retry after ${result.retryAfter} s)`;
    case 'timeout':
      return 'no answer from Telegram in time';
    case 'network':
      return 'Telegram unreachable';
  }
}

function recordOf(called: Called): AttemptRecord {
  const { result, ms } = called;
  switch (result.kind) {
    case 'ok':
      return { status: 200, error: null, durationMs: ms };
    case 'error':
      return {
        status: result.errorCode,
        error: null,
        durationMs: ms,
        body: Buffer.from(result.description, 'utf8'),
      };
    case 'paced':
      return { status: 429, error: 'paced', durationMs: ms };
    default:
      return { status: null, error: result.kind, durationMs: ms };
  }
}
