import { classifyOutboxCall } from './outbox-classifier';

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
