import { Inject, Injectable, Optional } from '@nestjs/common';
import { ConfigService, RESERVED_METHODS, type RelaygramConfig } from '@relaygram/config';
import { errorMessage } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { OutboundPacer, countPace, reportTelegram429, type PaceResult } from '@relaygram/pacing';
import { TelegramError, isBotApiMethodName } from '@relaygram/telegram';
import type { Logger } from 'pino';
import { DISPATCHER_LOGGER } from '../dispatcher-options';
import { BotClients } from '../telegram/bot-clients';

/**
 * What happened to a webhook reply: the `outcome` label of the metric. `paced`: its bot
 * had no slot for it within max_wait, so it was not sent.
 */
export type WebhookReplyOutcome = 'ok' | 'error' | 'refused' | 'paced';

/** Where a reply came from, for the log line. */
export interface ReplySource {
  route: string;
  bot: string;
  updateId: number;
  deliveryId: string;
}

/** A webhook reply waits at most this long for Telegram, so it holds its lane briefly. */
export const WEBHOOK_REPLY_TIMEOUT_MS = 10_000;

const RESERVED = new Set(RESERVED_METHODS.map((method) => method.toLowerCase()));

/**
 * Telegram's webhook reply, done for the target (SPEC section 5): a 2xx JSON answer
 * whose body has a `method` is that Bot API call for the bot. Reserved methods (they
 * would take the update stream or the bot away) are refused; failures are logged and
 * counted, never retried, and never change the delivery's outcome. The call is
 * awaited before the lane moves on, as Telegram finishes a reply before it sends the
 * chat's next update, so replies to one chat keep their order.
 *
 * Replies that send or edit a message are paced like the gateway's calls, by the same
 * budgets in Redis: the reply waits for its slot (holding its lane, at most the bot's
 * max_wait) or is not sent (`paced`). A Telegram 429 pauses what it hit for every
 * process. Give the process's OutboundPacer (PacingModule) so the dispatcher and the
 * gateway of a standalone process share one fallback budget; without one the executor
 * connects a pacer of its own.
 */
@Injectable()
export class WebhookReplyExecutor {
  readonly #bots: BotClients;
  readonly #pacer: OutboundPacer;
  readonly #ownsPacer: boolean;

  constructor(
    @Inject(ConfigService) { config }: Pick<ConfigService, 'config'>,
    private readonly metrics: RelaygramMetrics,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
    @Optional() pacer?: OutboundPacer,
  ) {
    this.#bots = new BotClients(config, metrics, logger, {
      user: 'webhook replies',
      connections: 4,
      timeoutMs: WEBHOOK_REPLY_TIMEOUT_MS,
    });
    this.#ownsPacer = pacer === undefined;
    this.#pacer =
      pacer ??
      OutboundPacer.connect(config.redis, {
        connectionName: 'relaygram-dispatcher-pacing',
        logger: {
          warn: (fields, message) => logger.warn(fields, message),
          info: (fields, message) => logger.info(fields, message),
        },
      });
  }

  /** A body with no `method` is an ordinary answer: nothing happens. */
  async execute(source: ReplySource, body: Buffer): Promise<WebhookReplyOutcome | undefined> {
    const call = parseReply(body);
    if (!call) return undefined;
    const fields = {
      bot: source.bot,
      update_id: source.updateId,
      route: source.route,
      delivery_id: source.deliveryId,
    };
    const { method, params } = call;
    if (!isBotApiMethodName(method) || RESERVED.has(method.toLowerCase())) {
      this.#count(source.route, 'refused');
      this.logger.warn(
        { ...fields, method: isBotApiMethodName(method) ? method : undefined },
        'webhook reply refused: reserved or invalid Bot API method',
      );
      return 'refused';
    }
    const client = this.#bots.client(source.bot);
    const bot = this.#bots.bot(source.bot);
    if (!client || !bot) {
      this.#count(source.route, 'error');
      this.logger.warn({ ...fields, method }, 'webhook reply failed: the bot is not configured');
      return 'error';
    }
    const pace = await this.#pace(bot, method, params);
    if (pace.kind === 'refused' || pace.kind === 'aborted') {
      this.#count(source.route, 'paced');
      this.logger.warn(
        { ...fields, method, retry_after: pace.kind === 'refused' ? pace.retryAfter : undefined },
        'webhook reply not sent: no slot in its bot budget within max_wait',
      );
      return 'paced';
    }
    try {
      await client.call(method, params, { timeoutMs: WEBHOOK_REPLY_TIMEOUT_MS });
      this.#count(source.route, 'ok');
      this.logger.debug({ ...fields, method }, 'webhook reply sent');
      return 'ok';
    } catch (error) {
      if (pace.kind === 'go' && error instanceof TelegramError && error.errorCode === 429) {
        await reportTelegram429(this.#pacer, this.metrics, bot, pace.plan, error.retryAfter);
      }
      this.#count(source.route, 'error');
      // Errors of the telegram lib never carry the token (see telegram.errors.ts).
      this.logger.warn({ ...fields, method, error: errorMessage(error) }, 'webhook reply failed');
      return 'error';
    }
  }

  replace(config: RelaygramConfig): Promise<void> {
    return this.#bots.reload(config);
  }

  async close(): Promise<void> {
    await this.#bots.close();
    if (this.#ownsPacer) await this.#pacer.close();
  }

  async #pace(
    bot: RelaygramConfig['bots'][number],
    method: string,
    params: Record<string, unknown>,
  ): Promise<PaceResult> {
    const result = await this.#pacer.acquire(bot, method, params);
    countPace(this.metrics, bot.id, result);
    return result;
  }

  #count(route: string, outcome: WebhookReplyOutcome): void {
    this.metrics.webhookReplies.inc({ route, outcome });
  }
}

/** `{ method, ...params }` from a reply body, or undefined when it carries no method. */
export function parseReply(
  body: Buffer,
): { method: unknown; params: Record<string, unknown> } | undefined {
  if (body.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (!Object.hasOwn(value, 'method')) return undefined;
  const { method, ...params } = value as Record<string, unknown>;
  return { method, params };
}
