import {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramRequestError,
  TelegramTimeoutError,
} from '@relaygram/telegram';
import type { RestAnswer, RestErrorBody } from '../rest/rest-answers';

/**
 * SPEC section 6: Telegram said no → 502 with `ETELEGRAM: <code> <description>` and
 * its details; unreachable → 502 `EFATAL: <reason>`; no answer in time → 504. The
 * messages come from @relaygram/telegram, which builds them without the token.
 */
export function restTelegramFailure(error: unknown): RestAnswer {
  if (error instanceof TelegramError) {
    const body: RestErrorBody = { error: error.message, error_code: error.errorCode };
    const headers: Record<string, string> = {};
    if (error.retryAfter !== undefined) {
      body.retry_after = error.retryAfter;
      headers['retry-after'] = String(error.retryAfter);
    }
    if (error.migrateToChatId !== undefined) body.migrate_to_chat_id = error.migrateToChatId;
    return { status: 502, body, headers };
  }
  if (error instanceof TelegramTimeoutError) return { status: 504, body: { error: error.message } };
  if (error instanceof TelegramNetworkError) return { status: 502, body: { error: error.message } };
  if (error instanceof TelegramRequestError) return { status: 400, body: { error: error.message } };
  // Only our own signal aborts a call, when the caller went away: nobody reads this.
  if (error instanceof TelegramAbortError) return { status: 503, body: { error: error.message } };
  return { status: 500, body: { error: 'internal error' } };
}

/** Telegram-style failure body for the drop-in, which frameworks parse as Telegram's own. */
export interface DropInErrorBody {
  ok: false;
  error_code: number;
  description: string;
  parameters?: { retry_after?: number };
}

export interface DropInAnswer {
  status: number;
  body: DropInErrorBody;
}

export function dropInError(status: number, description: string): DropInAnswer {
  return { status, body: { ok: false, error_code: status, description } };
}

/**
 * Telegram's own errors pass through the drop-in untouched (they are answers, not
 * exceptions); what is left is our side failing to reach it.
 */
export function dropInTelegramFailure(error: unknown): DropInAnswer {
  if (error instanceof TelegramTimeoutError) {
    return dropInError(504, `Gateway Timeout: ${error.message}`);
  }
  if (error instanceof TelegramNetworkError)
    return dropInError(502, `Bad Gateway: ${error.message}`);
  if (error instanceof TelegramRequestError)
    return dropInError(400, `Bad Request: ${error.message}`);
  if (error instanceof TelegramAbortError) return dropInError(503, 'Service Unavailable');
  if (error instanceof TelegramError) {
    return dropInError(error.errorCode, error.description);
  }
  return dropInError(500, 'Internal Server Error');
}

/** SPEC section 6: at most this long a 429 is waited out, and only once. */
export const MAX_WAITED_RETRY_AFTER_SECONDS = 5;

/**
 * How long to wait before the one retry of a call that got a 429, or undefined when it
 * must not be retried: a longer retry_after is the caller's to handle, and a streamed
 * upload cannot be sent again.
 */
export function retryDelayMs(error: unknown, replayable: boolean): number | undefined {
  if (!replayable || !(error instanceof TelegramError) || error.errorCode !== 429) return undefined;
  const seconds = error.retryAfter;
  if (seconds === undefined || seconds < 0 || seconds > MAX_WAITED_RETRY_AFTER_SECONDS) {
    return undefined;
  }
  return seconds * 1000;
}
