import { classifyOutboxCall, outboxRetryDelay } from './outbox-classifier';

describe('classifyOutboxCall', () => {
  it('calls an ok answer sent', () => {
    expect(classifyOutboxCall({ kind: 'ok' })).toEqual({ outcome: 'sent' });
  });

  it.each([
    [400, 'Bad Request: chat not found'],
    [403, 'Forbidden: bot was blocked by the user'],
    [404, 'Not Found'],
    [401, 'Unauthorized'],
  ])('ends a %i as failed, with what Telegram said', (errorCode, description) => {
    expect(classifyOutboxCall({ kind: 'error', errorCode, description })).toEqual({
      outcome: 'failed',
      errorCode,
      description,
    });
  });

  it("waits a 429's retry_after, 1 s when it names none", () => {
    expect(
      classifyOutboxCall({
        kind: 'error',
        errorCode: 429,
        description: 'Too Many Requests',
        retryAfter: 7,
      }),
    ).toEqual({ outcome: 'retry', retryAfterMs: 7_000 });
    expect(
      classifyOutboxCall({ kind: 'error', errorCode: 429, description: 'Too Many Requests' }),
    ).toEqual({
      outcome: 'retry',
      retryAfterMs: 1_000,
    });
  });

  it('waits as long as the pacing says when the bot had no slot', () => {
    expect(classifyOutboxCall({ kind: 'paced', retryAfter: 3 })).toEqual({
      outcome: 'retry',
      retryAfterMs: 3_000,
    });
  });

  it.each([
    { kind: 'error' as const, errorCode: 500, description: 'Internal Server Error' },
    { kind: 'error' as const, errorCode: 502, description: 'Bad Gateway' },
    { kind: 'error' as const, errorCode: 0, description: 'no code' },
    { kind: 'timeout' as const },
    { kind: 'network' as const },
  ])('backs off and tries again after %o', (result) => {
    expect(classifyOutboxCall(result)).toEqual({ outcome: 'retry' });
  });
});

describe('outboxRetryDelay', () => {
  const top = () => 0.999_999;

  it("waits exactly a 429's or the pacing's retry_after, however many attempts came before", () => {
    for (const attempt of [1, 6, 12]) {
      expect(
        outboxRetryDelay({ outcome: 'retry', retryAfterMs: 2_000 }, attempt, 60_000, top),
      ).toBe(2_000);
    }
    expect(outboxRetryDelay({ outcome: 'retry', retryAfterMs: 90_000 }, 1, 60_000)).toBe(60_000);
  });

  it('backs off a 5xx or a network error by the attempt, with full jitter, up to the cap', () => {
    expect(outboxRetryDelay({ outcome: 'retry' }, 1, 60_000, top)).toBe(999);
    expect(outboxRetryDelay({ outcome: 'retry' }, 4, 60_000, top)).toBe(7_999);
    expect(outboxRetryDelay({ outcome: 'retry' }, 30, 60_000, top)).toBe(59_999);
    expect(outboxRetryDelay({ outcome: 'retry' }, 4, 60_000, () => 0)).toBe(0);
  });
});
