import { extendStreak, firstBytes, routeFailingOf, type FailedAttempt } from './failure-streak';

const attempt = (at: number, status = 401, body = 'no'): FailedAttempt => ({
  status,
  error: status ? `HTTP ${status}` : 'timeout',
  body: Buffer.from(body),
  at,
});

describe('failure streak', () => {
  it('starts at the first failed attempt and counts on, keeping the last answer', () => {
    let streak = extendStreak(undefined, attempt(1000, 503, 'busy'));
    streak = extendStreak(streak, attempt(2000));
    streak = extendStreak(streak, attempt(3000, 401, 'expired'));
    expect(streak.attempts).toBe(3);
    expect(streak.since).toBe(1000);
    expect(routeFailingOf(streak)).toEqual({
      status: 401,
      error: 'HTTP 401',
      body: 'expired',
      since: new Date(1000).toISOString(),
      last_at: new Date(3000).toISOString(),
      attempts: 3,
    });
  });

  it('shows a timeout or network error without a status', () => {
    expect(routeFailingOf(extendStreak(undefined, attempt(5, 0, '')))).toMatchObject({
      status: null,
      error: 'timeout',
      body: '',
    });
  });

  it("keeps the answer's first 200 bytes, never half a character", () => {
    expect(firstBytes(undefined)).toBe('');
    expect(firstBytes(Buffer.from('a'.repeat(300)))).toBe('a'.repeat(200));
    // 199 ASCII bytes then "é" (2 bytes): the cut at 200 would split it.
    expect(firstBytes(Buffer.from('a'.repeat(199) + 'é' + 'z'))).toBe('a'.repeat(199));
    expect(firstBytes(Buffer.from('a'.repeat(198) + 'é' + 'z'))).toBe('a'.repeat(198) + 'é');
  });
});
