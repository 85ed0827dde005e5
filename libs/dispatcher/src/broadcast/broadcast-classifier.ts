import { BROADCAST_MAX_ATTEMPTS } from '@relaygram/contracts';
import { retryDelay } from '../delivery/backoff';

/** The longest a broadcast send waits before its next try after a 5xx or a network error. */
export const BROADCAST_BACKOFF_CAP_MS = 60_000;

/** How one send of a broadcast to one recipient ended, as the Bot API client saw it. */
export type BroadcastCallResult =
  | { kind: 'ok' }
  /** Telegram answered `ok: false`. */
  | { kind: 'error'; errorCode: number; description: string; retryAfter?: number }
  /** The bot's pacing had no slot for it within max_wait: Telegram was not called. */
  | { kind: 'paced'; retryAfter: number }
  | { kind: 'timeout' }
  | { kind: 'network' };

/** Why a send is tried again: each is one class of log line and of the `retry` outcome. */
export type RetryReason = 'too-many-requests' | 'paced' | 'server-error' | 'timeout' | 'network';

export type BroadcastVerdict =
  | { outcome: 'sent' }
  /** 403: the user blocked the bot, deleted the account, or the bot left the chat. */
  | { outcome: 'blocked'; errorCode: number; description: string }
  | { outcome: 'failed'; errorCode?: number; description: string }
  /**
   * 401: Telegram refused the bot's token (revoked, or a wrong one in the config). Every
   * send of the broadcast would fail the same way: the recipient is not counted, and
   * the broadcast is paused with the reason until the token is fixed.
   */
  | { outcome: 'halt'; errorCode: number; description: string }
  | { outcome: 'retry'; delayMs: number; reason: RetryReason; error: string };

/**
 * Telegram's answer to one send of a broadcast (issue 16, ../shared/TELEGRAM.md):
 * - ok: sent;
 * - 403 (`Forbidden: bot was blocked by the user`, a kicked bot, a deactivated user):
 *   blocked, listed with Telegram's description;
 * - 429: again after its `retry_after` (1 s when it names none); no slot in the bot's
 *   own budget the same way, after the retry_after the pacing named (at least 1 s, so
 *   a broadcast with no room cannot spin);
 * - 5xx, a timeout, a network error: again after the backoff (full jitter, capped at
 *   60 s), unless `attempt` is the BROADCAST_MAX_ATTEMPTS-th: then failed with the last
 *   error. A timed-out call may have reached Telegram, so its retry may send twice;
 * - 401: halt (the bot's token is refused; the recipient is not to blame);
 * - any other 4xx: failed, with Telegram's error_code and description.
 * `attempt` counts this one: the recipient's tries (its 5xx, timeouts and network
 * errors before; a 429 or no pacing slot counts none) plus one. Codes outside 400-599 are not answers we can judge: like a 5xx.
 */
export function classifyBroadcastSend(
  result: BroadcastCallResult,
  attempt: number,
  random: () => number = Math.random,
): BroadcastVerdict {
  switch (result.kind) {
    case 'ok':
      return { outcome: 'sent' };
    case 'paced':
      return {
        outcome: 'retry',
        delayMs: Math.max(1, result.retryAfter) * 1_000,
        reason: 'paced',
        error: `no slot in the bot's broadcast budget (retry after ${result.retryAfter} s)`,
      };
    case 'timeout':
      return transient(attempt, 'timeout', 'no answer from Telegram in time', undefined, random);
    case 'network':
      return transient(attempt, 'network', 'Telegram unreachable', undefined, random);
    case 'error':
      return classifyError(result, attempt, random);
  }
}

function classifyError(
  result: Extract<BroadcastCallResult, { kind: 'error' }>,
  attempt: number,
  random: () => number,
): BroadcastVerdict {
  const { errorCode, description } = result;
  if (errorCode === 429) {
    return {
      outcome: 'retry',
      delayMs: Math.max(1, result.retryAfter ?? 1) * 1_000,
      reason: 'too-many-requests',
      error: `429 ${description}`,
    };
  }
  if (errorCode === 403) return { outcome: 'blocked', errorCode, description };
  if (errorCode === 401) return { outcome: 'halt', errorCode, description };
  if (errorCode >= 400 && errorCode <= 499) return { outcome: 'failed', errorCode, description };
  return transient(attempt, 'server-error', `${errorCode} ${description}`, errorCode, random);
}

function transient(
  attempt: number,
  reason: RetryReason,
  error: string,
  errorCode: number | undefined,
  random: () => number,
): BroadcastVerdict {
  if (attempt >= BROADCAST_MAX_ATTEMPTS) {
    const description = `${error} (gave up after ${attempt} attempts)`;
    return errorCode === undefined
      ? { outcome: 'failed', description }
      : { outcome: 'failed', errorCode, description };
  }
  const delayMs = retryDelay(attempt, BROADCAST_BACKOFF_CAP_MS, undefined, random);
  return { outcome: 'retry', delayMs, reason, error };
}
