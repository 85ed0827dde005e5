import {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramRequestError,
  TelegramTimeoutError,
} from '@relaygram/telegram';
import { dropInTelegramFailure, restTelegramFailure, retryDelayMs } from './telegram-error.mapper';

const blocked = new TelegramError({
  method: 'sendMessage',
  errorCode: 403,
  description: 'Forbidden: bot was blocked by the user',
  httpStatus: 403,
});
const flood = (retryAfter?: number) =>
  new TelegramError({
    method: 'sendMessage',
    errorCode: 429,
    description: `Too Many Requests: retry after ${retryAfter}`,
    httpStatus: 429,
    retryAfter,
  });
const unreachable = new TelegramNetworkError({
  method: 'sendMessage',
  code: 'ECONNREFUSED',
  reason: 'ECONNREFUSED 127.0.0.1:1 (connection refused)',
});
const timeout = new TelegramTimeoutError({ method: 'sendMessage', timeoutMs: 100 });

describe('restTelegramFailure', () => {
  it('answers a Telegram error with 502, its message and error_code', () => {
    expect(restTelegramFailure(blocked)).toEqual({
      status: 502,
      body: { error: 'ETELEGRAM: 403 Forbidden: bot was blocked by the user', error_code: 403 },
      headers: {},
    });
  });

  it('adds retry_after with a Retry-After header, and migrate_to_chat_id', () => {
    expect(restTelegramFailure(flood(30))).toEqual({
      status: 502,
      body: {
        error: 'ETELEGRAM: 429 Too Many Requests: retry after 30',
        error_code: 429,
        retry_after: 30,
      },
      headers: { 'retry-after': '30' },
    });
    const migrated = new TelegramError({
      method: 'sendMessage',
      errorCode: 400,
      description: 'Bad Request: group chat was upgraded to a supergroup chat',
      httpStatus: 400,
      migrateToChatId: -1001234,
    });
    expect(restTelegramFailure(migrated).body).toMatchObject({ migrate_to_chat_id: -1001234 });
  });

  it('answers unreachable with 502 EFATAL, a timeout with 504', () => {
    expect(restTelegramFailure(unreachable)).toEqual({
      status: 502,
      body: { error: 'EFATAL: ECONNREFUSED 127.0.0.1:1 (connection refused)' },
    });
    expect(restTelegramFailure(timeout)).toMatchObject({ status: 504 });
  });

  it('answers a refused request with 400 and anything else with a bare 500', () => {
    expect(restTelegramFailure(new TelegramRequestError('bad params'))).toEqual({
      status: 400,
      body: { error: 'bad params' },
    });
    expect(restTelegramFailure(new Error('secret detail'))).toEqual({
      status: 500,
      body: { error: 'internal error' },
    });
    expect(restTelegramFailure(new TelegramAbortError({ method: 'x' })).status).toBe(503);
  });
});

describe('dropInTelegramFailure', () => {
  it('answers Telegram-style, with our status as error_code', () => {
    expect(dropInTelegramFailure(unreachable)).toEqual({
      status: 502,
      body: {
        ok: false,
        error_code: 502,
        description: 'Bad Gateway: EFATAL: ECONNREFUSED 127.0.0.1:1 (connection refused)',
      },
    });
    expect(dropInTelegramFailure(timeout).status).toBe(504);
  });
});

describe('retryDelayMs', () => {
  it('waits out a 429 of at most 5 s, once, for a replayable body', () => {
    expect(retryDelayMs(flood(2), true)).toBe(2000);
    expect(retryDelayMs(flood(5), true)).toBe(5000);
    expect(retryDelayMs(flood(0), true)).toBe(0);
  });

  it('does not wait longer, without retry_after, for uploads or other errors', () => {
    expect(retryDelayMs(flood(6), true)).toBeUndefined();
    expect(retryDelayMs(flood(30), true)).toBeUndefined();
    expect(retryDelayMs(flood(undefined), true)).toBeUndefined();
    expect(retryDelayMs(flood(2), false)).toBeUndefined();
    expect(retryDelayMs(blocked, true)).toBeUndefined();
    expect(retryDelayMs(unreachable, true)).toBeUndefined();
  });
});
