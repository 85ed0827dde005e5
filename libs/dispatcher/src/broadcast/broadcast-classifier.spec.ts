import { BROADCAST_MAX_ATTEMPTS } from '@relaygram/contracts';
import {
  BROADCAST_BACKOFF_CAP_MS,
  classifyBroadcastSend,
  type BroadcastCallResult,
} from './broadcast-classifier';

const error = (errorCode: number, description: string, retryAfter?: number): BroadcastCallResult =>
  retryAfter === undefined
    ? { kind: 'error', errorCode, description }
    : { kind: 'error', errorCode, description, retryAfter };

/** The ceiling of the jitter: random() just below 1. */
const top = () => 0.999_999;

describe('classifyBroadcastSend', () => {
  it('counts an ok answer as sent', () => {
    expect(classifyBroadcastSend({ kind: 'ok' }, 1)).toEqual({ outcome: 'sent' });
  });

  it("lists a 403 as blocked, with Telegram's description, at any attempt", () => {
    for (const description of [
      'Forbidden: bot was blocked by the user',
      'Forbidden: user is deactivated',
      'Forbidden: bot was kicked from the group chat',
    ]) {
      expect(classifyBroadcastSend(error(403, description), 1)).toEqual({
        outcome: 'blocked',
        errorCode: 403,
        description,
      });
    }
    expect(classifyBroadcastSend(error(403, 'Forbidden'), BROADCAST_MAX_ATTEMPTS)).toMatchObject({
      outcome: 'blocked',
    });
  });

  it("halts on a 401, whatever the attempt: the bot's token is refused, not the recipient", () => {
    for (const attempt of [1, BROADCAST_MAX_ATTEMPTS]) {
      expect(classifyBroadcastSend(error(401, 'Unauthorized'), attempt)).toEqual({
        outcome: 'halt',
        errorCode: 401,
        description: 'Unauthorized',
      });
    }
  });

  it('fails other 4xx at once, with error_code and description', () => {
    for (const code of [400, 404, 409]) {
      expect(classifyBroadcastSend(error(code, `${code} says no`), 1)).toEqual({
        outcome: 'failed',
        errorCode: code,
        description: `${code} says no`,
      });
    }
  });

  it('retries a 429 after its retry_after, whatever the attempt, never sooner than 1 s', () => {
    const verdict = classifyBroadcastSend(error(429, 'Too Many Requests: retry after 7', 7), 8);
    expect(verdict).toEqual({
      outcome: 'retry',
      delayMs: 7_000,
      reason: 'too-many-requests',
      error: '429 Too Many Requests: retry after 7',
    });
    expect(classifyBroadcastSend(error(429, 'Too Many Requests'), 1)).toMatchObject({
      delayMs: 1_000,
    });
    expect(classifyBroadcastSend(error(429, 'Too Many Requests', 0), 1)).toMatchObject({
      delayMs: 1_000,
    });
  });

  it("retries a send the pacing refused after the pacing's retry_after", () => {
    expect(classifyBroadcastSend({ kind: 'paced', retryAfter: 3 }, 20)).toMatchObject({
      outcome: 'retry',
      delayMs: 3_000,
      reason: 'paced',
    });
    expect(classifyBroadcastSend({ kind: 'paced', retryAfter: 0 }, 1)).toMatchObject({
      delayMs: 1_000,
    });
  });

  it('retries 5xx, timeouts and network errors after the backoff, capped at 60 s', () => {
    const cases: [BroadcastCallResult, string, string][] = [
      [error(500, 'Internal Server Error'), 'server-error', '500 Internal Server Error'],
      [error(502, 'Bad Gateway'), 'server-error', '502 Bad Gateway'],
      [{ kind: 'timeout' }, 'timeout', 'no answer from Telegram in time'],
      [{ kind: 'network' }, 'network', 'Telegram unreachable'],
      [error(302, 'Found'), 'server-error', '302 Found'],
    ];
    for (const [result, reason, message] of cases) {
      expect(classifyBroadcastSend(result, 1, top)).toEqual({
        outcome: 'retry',
        delayMs: 999,
        reason,
        error: message,
      });
    }
    expect(classifyBroadcastSend({ kind: 'network' }, 3, top)).toMatchObject({ delayMs: 3_999 });
    const late = classifyBroadcastSend({ kind: 'network' }, BROADCAST_MAX_ATTEMPTS - 1, top);
    expect(late).toMatchObject({ outcome: 'retry' });
    if (late.outcome !== 'retry') throw new Error('not a retry');
    expect(late.delayMs).toBeLessThanOrEqual(BROADCAST_BACKOFF_CAP_MS);
    expect(classifyBroadcastSend({ kind: 'timeout' }, 1, () => 0)).toMatchObject({ delayMs: 0 });
  });

  it('fails a send whose last allowed attempt met a 5xx or a network error, with that error', () => {
    expect(
      classifyBroadcastSend(error(503, 'Service Unavailable'), BROADCAST_MAX_ATTEMPTS),
    ).toEqual({
      outcome: 'failed',
      errorCode: 503,
      description: `503 Service Unavailable (gave up after ${BROADCAST_MAX_ATTEMPTS} attempts)`,
    });
    expect(classifyBroadcastSend({ kind: 'timeout' }, BROADCAST_MAX_ATTEMPTS + 2)).toEqual({
      outcome: 'failed',
      description: `no answer from Telegram in time (gave up after ${BROADCAST_MAX_ATTEMPTS + 2} attempts)`,
    });
  });
});
