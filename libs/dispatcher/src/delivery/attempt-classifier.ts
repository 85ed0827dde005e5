import { AttemptOutcome, DeadReason } from '@relaygram/contracts';

/** How one HTTP attempt ended, as the client saw it. */
export type AttemptResult =
  | { kind: 'response'; status: number }
  /** No complete answer within the route's timeout. */
  | { kind: 'timeout' }
  /** Refused, reset, dropped, DNS, TLS...: no HTTP answer at all. */
  | { kind: 'network' };

export type AttemptClass =
  | { outcome: AttemptOutcome.Delivered }
  /** Target down or misconfigured: retry without limit; the 5xx count is left as it is. */
  | { outcome: AttemptOutcome.Retry; consecutive5xx: number }
  /** 500, 501 and other 5xx: retry, one more toward max_consecutive_5xx. */
  | { outcome: AttemptOutcome.RetryCounted; consecutive5xx: number }
  | {
      outcome: AttemptOutcome.Dead;
      reason: DeadReason.Rejected | DeadReason.Poison;
      consecutive5xx: number;
    };

/** 4xx answers that say the target is down or misconfigured, not that the update is bad. */
const RETRIED_4XX = new Set([401, 403, 404, 408, 429]);
/** 5xx answers of gateways and overloaded servers: the target is away, not crashing on this update. */
const RETRIED_5XX = new Set([502, 503, 504]);

/**
 * SPEC section 5, one attempt:
 * - 2xx: delivered.
 * - 3xx (redirects are never followed), 401, 403, 404, 408, 429, 502, 503, 504,
 *   timeout, network error: retry, the lane waits.
 * - 500, 501 and other 5xx: retry, counting toward `max_consecutive_5xx`; the answer
 *   that reaches it makes the delivery dead as `poison`.
 * - any other 4xx: dead at once as `rejected`.
 *
 * The count belongs to the head of the lane and starts at 0 for each delivery (and
 * again on a re-send). Retry-class answers neither count nor reset it: a target that
 * flaps between 503 (restarting) and 500 (crashing on this very update) is the poison
 * case the limit exists for, and resetting on the 503s would let that update hold its
 * lane forever. Anything outside 100-599 is not an HTTP answer we can judge: retried.
 */
export function classifyAttempt(
  result: AttemptResult,
  consecutive5xx: number,
  maxConsecutive5xx: number,
): AttemptClass {
  if (result.kind !== 'response') return { outcome: AttemptOutcome.Retry, consecutive5xx };
  const { status } = result;
  if (status >= 200 && status <= 299) return { outcome: AttemptOutcome.Delivered };
  if (status >= 400 && status <= 499) {
    if (RETRIED_4XX.has(status)) return { outcome: AttemptOutcome.Retry, consecutive5xx };
    return { outcome: AttemptOutcome.Dead, reason: DeadReason.Rejected, consecutive5xx };
  }
  if (status >= 500 && status <= 599 && !RETRIED_5XX.has(status)) {
    const counted = consecutive5xx + 1;
    if (counted >= maxConsecutive5xx) {
      return { outcome: AttemptOutcome.Dead, reason: DeadReason.Poison, consecutive5xx: counted };
    }
    return { outcome: AttemptOutcome.RetryCounted, consecutive5xx: counted };
  }
  return { outcome: AttemptOutcome.Retry, consecutive5xx };
}

/**
 * SPEC section 5: a delivery older than `max_age` (counted from acceptance, or from its
 * re-send) goes dead as `expired` when it reaches the head, without another attempt.
 */
export function isExpired(
  entry: { acceptedAt: number; replayedAt?: number },
  maxAgeMs: number,
  now: number,
): boolean {
  return now - (entry.replayedAt ?? entry.acceptedAt) > maxAgeMs;
}
