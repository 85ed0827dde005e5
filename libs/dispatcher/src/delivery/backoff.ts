/** The first retry waits up to this long; each further one doubles the ceiling. */
export const BACKOFF_BASE_MS = 1_000;

/**
 * Exponential backoff with full jitter (a uniform pick between 0 and the ceiling), the
 * ceiling starting at 1 s and doubling per attempt, capped at `capMs` (the route's
 * `backoff_cap`). `attempt` is the attempt that just failed, 1 for the first.
 */
export function backoffDelay(
  attempt: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 40);
  const ceiling = Math.min(capMs, BACKOFF_BASE_MS * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

/**
 * The wait before the next attempt. A `Retry-After` is honoured up to `capMs`: the
 * attempt is never earlier than the target asked for (unless that is beyond the cap),
 * and never earlier than the backoff would make it, so `Retry-After: 0` cannot turn a
 * failing target into a hot loop.
 */
export function retryDelay(
  attempt: number,
  capMs: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const backoff = backoffDelay(attempt, capMs, random);
  return Math.min(capMs, Math.max(backoff, retryAfterMs ?? 0));
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number,
): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1_000;
  // An HTTP date names its month (`Wed, 21 Oct 2015 07:28:00 GMT`); Date.parse alone
  // would also take `-5` or `1.5` for dates.
  if (!/[A-Za-z]{3}/.test(raw)) return undefined;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
