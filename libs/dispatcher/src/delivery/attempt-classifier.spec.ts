import { AttemptOutcome, DeadReason } from '@relaygram/contracts';
import { classifyAttempt, isExpired, type AttemptResult } from './attempt-classifier';

const response = (status: number): AttemptResult => ({ kind: 'response', status });
const MAX = 8;

describe('classifyAttempt', () => {
  it.each([200, 201, 202, 204, 226, 299])('%i: delivered', (status) => {
    expect(classifyAttempt(response(status), 3, MAX)).toEqual({
      outcome: AttemptOutcome.Delivered,
    });
  });

  it.each([300, 301, 302, 303, 304, 307, 308, 399, 401, 403, 404, 408, 429, 502, 503, 504])(
    '%i: retried without limit, the 5xx count left as it is',
    (status) => {
      expect(classifyAttempt(response(status), 5, MAX)).toEqual({
        outcome: AttemptOutcome.Retry,
        consecutive5xx: 5,
      });
      // Even at the limit: these never make a delivery poison.
      expect(classifyAttempt(response(status), MAX - 1, MAX).outcome).toBe(AttemptOutcome.Retry);
    },
  );

  it.each([{ kind: 'timeout' }, { kind: 'network' }] as AttemptResult[])(
    '$kind: retried without limit',
    (result) => {
      expect(classifyAttempt(result, 7, MAX)).toEqual({
        outcome: AttemptOutcome.Retry,
        consecutive5xx: 7,
      });
    },
  );

  it.each([400, 402, 405, 406, 409, 410, 411, 413, 415, 418, 422, 426, 451, 499])(
    '%i: rejected, dead at once',
    (status) => {
      expect(classifyAttempt(response(status), 0, MAX)).toEqual({
        outcome: AttemptOutcome.Dead,
        reason: DeadReason.Rejected,
        consecutive5xx: 0,
      });
    },
  );

  it.each([500, 501, 505, 507, 511, 520, 599])(
    '%i: retried, counting toward max_consecutive_5xx',
    (status) => {
      expect(classifyAttempt(response(status), 0, MAX)).toEqual({
        outcome: AttemptOutcome.RetryCounted,
        consecutive5xx: 1,
      });
      expect(classifyAttempt(response(status), MAX - 2, MAX)).toEqual({
        outcome: AttemptOutcome.RetryCounted,
        consecutive5xx: MAX - 1,
      });
    },
  );

  it('makes the answer that reaches max_consecutive_5xx poison', () => {
    expect(classifyAttempt(response(500), MAX - 1, MAX)).toEqual({
      outcome: AttemptOutcome.Dead,
      reason: DeadReason.Poison,
      consecutive5xx: MAX,
    });
    expect(classifyAttempt(response(501), 0, 1)).toMatchObject({ reason: DeadReason.Poison });
  });

  it('walks a sequence of answers the way the lane would', () => {
    let count = 0;
    const outcomes: string[] = [];
    for (const status of [500, 503, 500, 429, 502, 500]) {
      const verdict = classifyAttempt(response(status), count, 3);
      outcomes.push(verdict.outcome);
      if (verdict.outcome !== AttemptOutcome.Delivered) count = verdict.consecutive5xx;
    }
    expect(outcomes).toEqual(['retry_counted', 'retry', 'retry_counted', 'retry', 'retry', 'dead']);
  });

  it.each([100, 101, 199, 600, 999])('%i: not a final answer we can judge, retried', (status) => {
    expect(classifyAttempt(response(status), 2, MAX)).toEqual({
      outcome: AttemptOutcome.Retry,
      consecutive5xx: 2,
    });
  });
});

describe('isExpired', () => {
  it('counts from acceptance, or from the re-send', () => {
    expect(isExpired({ acceptedAt: 1_000 }, 500, 1_500)).toBe(false);
    expect(isExpired({ acceptedAt: 1_000 }, 500, 1_501)).toBe(true);
    expect(isExpired({ acceptedAt: 1_000, replayedAt: 5_000 }, 500, 5_400)).toBe(false);
    expect(isExpired({ acceptedAt: 1_000, replayedAt: 5_000 }, 500, 5_501)).toBe(true);
  });
});
