import type { BotConfig } from '@relaygram/config';
import { errorMessage, type BroadcastCall } from '@relaygram/contracts';
import type { RelaygramMetrics } from '@relaygram/observability';
import { countPace, reportTelegram429, type OutboundPacer } from '@relaygram/pacing';
import {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramTimeoutError,
  type TelegramClient,
} from '@relaygram/telegram';
import type { BroadcastCallResult } from './broadcast-classifier';
import type { ThrottledLog } from './throttled-log';

/** A Telegram call of a broadcast gets this long to answer. */
export const BROADCAST_CALL_TIMEOUT_MS = 15_000;

/** One send in progress: what shutdown aborts, and whether it has left for Telegram. */
export interface SendHandle {
  readonly controller: AbortController;
  phase: 'pacing' | 'calling';
  readonly startedAt: number;
  /** Aborted because it waited too long for its pacing slot (then retried, not released). */
  expired?: boolean;
}

interface Once {
  result: BroadcastCallResult;
  migrateTo?: number;
}

/**
 * One recipient's send: a broadcast slot of the bot's pacing for `{...params, chat_id}`,
 * then the Bot API call. A group that became a supergroup is followed once, in the same
 * attempt. `aborted` when shutdown (or a pause) cut it before Telegram answered: then it
 * may or may not have been sent, if it had left (the documented window).
 */
export class BroadcastCaller {
  constructor(
    private readonly pacer: OutboundPacer,
    private readonly metrics: RelaygramMetrics,
    private readonly errors: ThrottledLog,
    private readonly stopping: () => boolean,
  ) {}

  async send(
    bot: BotConfig,
    client: TelegramClient,
    call: BroadcastCall,
    chatId: number | string,
    handle: SendHandle,
  ): Promise<BroadcastCallResult | 'aborted'> {
    const first = await this.#once(bot, client, call, chatId, handle);
    if (first === 'aborted') return first;
    if (first.migrateTo === undefined) return first.result;
    if (this.stopping()) return 'aborted';
    const second = await this.#once(bot, client, call, first.migrateTo, handle);
    return second === 'aborted' ? second : second.result;
  }

  async #once(
    bot: BotConfig,
    client: TelegramClient,
    { method, params }: BroadcastCall,
    chatId: number | string,
    handle: SendHandle,
  ): Promise<Once | 'aborted'> {
    const withChat = { ...params, chat_id: chatId };
    handle.phase = 'pacing';
    const { signal } = handle.controller;
    const pace = await this.pacer.acquireBroadcast(bot, method, withChat, signal);
    countPace(this.metrics, bot.id, pace);
    if (pace.kind === 'refused') return { result: { kind: 'paced', retryAfter: pace.retryAfter } };
    if (pace.kind === 'aborted') {
      return handle.expired ? { result: { kind: 'paced', retryAfter: 1 } } : 'aborted';
    }
    handle.phase = 'calling';
    try {
      await client.call(method, withChat, { timeoutMs: BROADCAST_CALL_TIMEOUT_MS, signal });
      return { result: { kind: 'ok' } };
    } catch (error) {
      if (error instanceof TelegramAbortError) return 'aborted';
      if (error instanceof TelegramTimeoutError) return { result: { kind: 'timeout' } };
      if (error instanceof TelegramError) {
        if (error.errorCode === 429 && pace.kind === 'go') {
          await reportTelegram429(this.pacer, this.metrics, bot, pace.plan, error.retryAfter);
        }
        const { errorCode, description, retryAfter, migrateToChatId } = error;
        const result: BroadcastCallResult = { kind: 'error', errorCode, description };
        if (retryAfter !== undefined) result.retryAfter = retryAfter;
        return migrateToChatId === undefined ? { result } : { result, migrateTo: migrateToChatId };
      }
      if (!(error instanceof TelegramNetworkError)) {
        // Not the client's own error class: a bug, worth a line (throttled per bot).
        this.errors.warn(
          `${bot.id}/call`,
          { bot: bot.id, method, error: errorMessage(error) },
          'broadcast call failed',
        );
      }
      return { result: { kind: 'network' } };
    }
  }
}
