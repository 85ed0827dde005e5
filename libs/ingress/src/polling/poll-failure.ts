import { errorMessage } from '@relaygram/contracts';
import { TelegramError, TelegramNetworkError, TelegramTimeoutError } from '@relaygram/telegram';

/** What a failed getUpdates means for the poller (SPEC section 3, polling adapter). */
export type PollFailure =
  /** 409 "webhook is active": delete the webhook (at most once a minute) and poll. */
  | { kind: 'webhook-active'; problem: string }
  /** 409 "terminated by other getUpdates request": another poller, maybe outside this install. */
  | { kind: 'terminated'; problem: string }
  /** 401/404: the token is refused; retry slowly. */
  | { kind: 'unauthorized'; problem: string }
  /** 429: wait `retry_after`. */
  | { kind: 'rate-limited'; waitMs: number; problem: string }
  /**
   * Network error, timeout, 5xx or any other answer (a 409 "terminated by setWebhook
   * request" included: the next poll then meets "webhook is active"): exponential backoff.
   */
  | { kind: 'network'; problem: string };

/** Classifies a getUpdates failure. The problem texts hold Telegram's words, never a token. */
export function classifyPollFailure(error: unknown): PollFailure {
  if (error instanceof TelegramError) {
    const said = `${error.errorCode} ${error.description}`;
    if (error.errorCode === 409 && /webhook is active/i.test(error.description)) {
      return { kind: 'webhook-active', problem: `a webhook is set for this bot (${said})` };
    }
    if (error.errorCode === 409 && /other getUpdates/i.test(error.description)) {
      return {
        kind: 'terminated',
        problem: `another getUpdates client polls this bot, outside this install (${said}); backing off, not competing`,
      };
    }
    if (error.errorCode === 401 || error.errorCode === 404) {
      return { kind: 'unauthorized', problem: `Telegram refuses the bot token (${said})` };
    }
    if (error.errorCode === 429) {
      const seconds = error.retryAfter !== undefined && error.retryAfter > 0 ? error.retryAfter : 1;
      return {
        kind: 'rate-limited',
        waitMs: seconds * 1000,
        problem: `rate limited by Telegram (${said}); waiting ${seconds} s`,
      };
    }
    return { kind: 'network', problem: `getUpdates failed: ${said}` };
  }
  if (error instanceof TelegramNetworkError) {
    return { kind: 'network', problem: `cannot reach Telegram: ${error.reason}` };
  }
  if (error instanceof TelegramTimeoutError) {
    return { kind: 'network', problem: `Telegram did not answer getUpdates in time` };
  }
  return {
    kind: 'network',
    problem: `getUpdates failed: ${errorMessage(error)}`,
  };
}

/** Exponential backoff: `initialMs` after the first failure, doubling, capped at `maxMs`. */
export function backoffDelay(failures: number, initialMs: number, maxMs: number): number {
  if (failures < 1) return 0;
  return Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
}
