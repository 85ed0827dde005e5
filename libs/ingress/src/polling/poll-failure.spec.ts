import { TelegramError, TelegramNetworkError, TelegramTimeoutError } from '@relaygram/telegram';
import { backoffDelay, classifyPollFailure } from './poll-failure';

const telegram = (errorCode: number, description: string, retryAfter?: number) =>
  new TelegramError({
    method: 'getUpdates',
    errorCode,
    description,
    httpStatus: errorCode,
    retryAfter,
  });

describe('classifyPollFailure', () => {
  it('tells the two 409s apart', () => {
    expect(
      classifyPollFailure(
        telegram(
          409,
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        ),
      ).kind,
    ).toBe('webhook-active');
    const terminated = classifyPollFailure(
      telegram(
        409,
        'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      ),
    );
    expect(terminated.kind).toBe('terminated');
    expect(terminated.problem).toMatch(/outside this install/);
    // Ended by a setWebhook: the next poll meets "webhook is active".
    expect(
      classifyPollFailure(telegram(409, 'Conflict: terminated by setWebhook request')).kind,
    ).toBe('network');
  });

  it('treats 401 and 404 as a refused token', () => {
    expect(classifyPollFailure(telegram(401, 'Unauthorized'))).toEqual({
      kind: 'unauthorized',
      problem: 'Telegram refuses the bot token (401 Unauthorized)',
    });
    expect(classifyPollFailure(telegram(404, 'Not Found')).kind).toBe('unauthorized');
  });

  it('waits retry_after on a 429, at least a second', () => {
    expect(classifyPollFailure(telegram(429, 'Too Many Requests: retry after 7', 7))).toMatchObject(
      {
        kind: 'rate-limited',
        waitMs: 7000,
      },
    );
    expect(classifyPollFailure(telegram(429, 'Too Many Requests'))).toMatchObject({ waitMs: 1000 });
  });

  it('backs off on network errors, timeouts, 5xx and anything else', () => {
    const network = new TelegramNetworkError({
      method: 'getUpdates',
      code: 'ECONNREFUSED',
      reason: 'ECONNREFUSED 127.0.0.1:1 (connection refused)',
    });
    expect(classifyPollFailure(network)).toEqual({
      kind: 'network',
      problem: 'cannot reach Telegram: ECONNREFUSED 127.0.0.1:1 (connection refused)',
    });
    expect(
      classifyPollFailure(new TelegramTimeoutError({ method: 'getUpdates', timeoutMs: 40_000 }))
        .kind,
    ).toBe('network');
    expect(classifyPollFailure(telegram(502, 'Bad Gateway')).problem).toBe(
      'getUpdates failed: 502 Bad Gateway',
    );
    expect(classifyPollFailure(new Error('boom')).kind).toBe('network');
  });
});

describe('backoffDelay', () => {
  it('doubles from the first delay up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, 1000, 30_000))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
    expect(backoffDelay(0, 1000, 30_000)).toBe(0);
    expect(backoffDelay(500, 1000, 30_000)).toBe(30_000);
  });
});
