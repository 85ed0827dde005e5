import { backoffDelay } from '../delivery/backoff';

/** How one call of an outbox send ended, as the Bot API client saw it. */
export type OutboxCallResult =
  | { kind: 'ok' }
  /** Telegram answered `ok: false`. */
  | { kind: 'error'; errorCode: number; description: string; retryAfter?: number }
  /** The bot's pacing had no slot within max_wait: Telegram was not called. */
  | { kind: 'paced'; retryAfter: number }
  | { kind: 'timeout' }
  | { kind: 'network' };

export type OutboxVerdict =
  | { outcome: 'sent' }
  /** Try again: at `retryAfterMs` from now when Telegram (or the pacing) named a time, else after the backoff. */
  | { outcome: 'retry'; retryAfterMs?: number }
  | { outcome: 'failed'; errorCode: number; description: string };

/**
 * Telegram's answers to an outbox send (../shared/TELEGRAM.md, issue 16's table):
 * - ok: sent;
 * - 429: again after its `retry_after` (1 s when it names none), and no slot in the
 *   bot's own budget the same way;
 * - 5xx, a timeout, a network error: again after the backoff. A timed-out call may have
 *   reached Telegram, so its retry may send twice (the at-least-once window);
 * - any other 4xx (400 bad request, 403 blocked by the user, 404...): failed for good,
 *   with Telegram's `error_code` and description: sending again would not change it.
 * Codes outside 400-599 are not answers we can judge: tried again.
 */
export function classifyOutboxCall(result: OutboxCallResult): OutboxVerdict {
  switch (result.kind) {
    case 'ok':
      return { outcome: 'sent' };
    case 'paced':
      return { outcome: 'retry', retryAfterMs: result.retryAfter * 1_000 };
    case 'timeout':
    case 'network':
      return { outcome: 'retry' };
    case 'error': {
      const { errorCode } = result;
      if (errorCode === 429)
        return { outcome: 'retry', retryAfterMs: (result.retryAfter ?? 1) * 1_000 };
      if (errorCode >= 400 && errorCode <= 499) {
        return { outcome: 'failed', errorCode, description: result.description };
      }
      return { outcome: 'retry' };
    }
  }
}

/**
 * How long a send waits before its next attempt. A 429's `retry_after` (or the pacing's)
 * is Telegram's own word on when the call may go: the send waits exactly that (up to
 * the cap), not the exponential backoff. The send's attempt count also holds its 429s
 * and pacing refusals, which are no sign that Telegram is failing, so only the other
 * retries (5xx, timeouts, network errors) back off by it, with full jitter.
 */
export function outboxRetryDelay(
  verdict: Extract<OutboxVerdict, { outcome: 'retry' }>,
  attempt: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  if (verdict.retryAfterMs !== undefined) return Math.min(capMs, verdict.retryAfterMs);
  return backoffDelay(attempt, capMs, random);
}
