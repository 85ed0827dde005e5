import { FAILING_BODY_BYTES, type RouteFailing } from '@relaygram/observability';

/** One attempt that did not deliver, as the outcome step knows it. */
export interface FailedAttempt {
  /** HTTP status; 0 without one (timeout, network error). */
  status: number;
  error: string;
  body: Buffer | undefined;
  /** When it ended (ms). */
  at: number;
}

/** A route's failed attempts in a row on this process. */
export interface FailureStreak {
  attempts: number;
  since: number;
  last: FailedAttempt;
}

export function extendStreak(
  streak: FailureStreak | undefined,
  attempt: FailedAttempt,
): FailureStreak {
  return streak
    ? { attempts: streak.attempts + 1, since: streak.since, last: attempt }
    : { attempts: 1, since: attempt.at, last: attempt };
}

/**
 * The first `limit` bytes of an answer as text, cut before a character the limit would
 * split (the answer is the target's own, shown to operators; headers never are).
 */
export function firstBytes(body: Buffer | undefined, limit = FAILING_BODY_BYTES): string {
  if (!body?.length) return '';
  if (body.length <= limit) return body.toString('utf8');
  let end = limit;
  // A UTF-8 continuation byte (10xxxxxx) at the cut: back up to the start of its character.
  while (end > 0 && (body[end] & 0xc0) === 0x80) end--;
  return body.subarray(0, end).toString('utf8');
}

export function routeFailingOf(streak: FailureStreak): RouteFailing {
  const { last } = streak;
  return {
    status: last.status || null,
    error: last.error,
    body: firstBytes(last.body),
    since: new Date(streak.since).toISOString(),
    last_at: new Date(last.at).toISOString(),
    attempts: streak.attempts,
  };
}
