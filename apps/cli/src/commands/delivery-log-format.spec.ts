import type { LoggedAttempt, UpdateTrace } from '@relaygram/contracts';
import {
  answerLine,
  attemptLines,
  parseLimit,
  parseWhen,
  parseUpdateId,
  traceLines,
} from './delivery-log-format';

const T0 = Date.parse('2026-12-02T16:30:00.000Z');

function attempt(overrides: Partial<LoggedAttempt>): LoggedAttempt {
  return {
    id: '1-0',
    at: T0,
    deliveryId: 'd-1',
    updateId: 42,
    bot: 'sol',
    route: 'shop',
    attempt: 1,
    outcome: 'delivered',
    status: 200,
    error: null,
    durationMs: 12,
    body: 'ok',
    nextAttemptAt: null,
    ...overrides,
  };
}

describe('the delivery log in the terminal', () => {
  it('reads --since as an age or an ISO time, and refuses anything else', () => {
    expect(parseWhen('10m', T0)).toBe(T0 - 600_000);
    expect(parseWhen('2h', T0)).toBe(T0 - 7_200_000);
    expect(parseWhen('30s', T0)).toBe(T0 - 30_000);
    expect(parseWhen('1d', T0)).toBe(T0 - 86_400_000);
    expect(parseWhen('2026-12-02T16:00:00Z', T0)).toBe(T0 - 1_800_000);
    for (const bad of ['10', '10x', 'yesterday', '-5m', 'May 1', '2026-13-45']) {
      expect(() => parseWhen(bad, T0)).toThrow(/age \(30s, 10m, 2h, 1d\) or an ISO time/);
    }
  });

  it('reads update ids and limits as whole numbers in range', () => {
    expect(parseUpdateId('0')).toBe(0);
    expect(parseUpdateId('900000123')).toBe(900000123);
    for (const bad of ['', '-1', '1.5', '1e3', 'abc', '99999999999999999']) {
      expect(() => parseUpdateId(bad)).toThrow(/not an update_id/);
    }
    expect(parseLimit('200')).toBe(200);
    for (const bad of ['0', '201', '2.5', 'x']) expect(() => parseLimit(bad)).toThrow(/1 to 200/);
  });

  it('prints an answer quoted on one line, control characters escaped, cut to the width', () => {
    expect(answerLine('', 40)).toBe('-');
    expect(answerLine('line 1\nline 2\t\u001b[31mred', 80)).toBe(
      '"line 1\\nline 2\\t\\u001b[31mred"',
    );
    expect(answerLine('\u009b2J\u2028', 80)).toBe('"\\u009b2J\\u2028"');
    const cut = answerLine('x'.repeat(500), 30);
    expect(cut).toHaveLength(30);
    expect(cut.endsWith('…')).toBe(true);
  });

  it("traces an update's fan-out, each delivery's state and every attempt", () => {
    const trace: UpdateTrace = {
      bot: 'sol',
      updateId: 42,
      status: 'queued',
      receivedAt: T0,
      duplicatesAt: [T0 + 5_000],
      deliveries: [
        {
          route: 'shop',
          deliveryId: 'd-1',
          state: 'delivered',
          nextAttemptAt: null,
          attempts: [attempt({})],
        },
        {
          route: 'site',
          deliveryId: 'd-2',
          state: 'retrying',
          nextAttemptAt: T0 + 2_000,
          attempts: [
            attempt({
              route: 'site',
              deliveryId: 'd-2',
              outcome: 'retry',
              status: null,
              error: 'timeout',
              durationMs: 5000,
              body: '',
            }),
          ],
        },
        { route: 'slow', deliveryId: 'd-3', state: 'queued', nextAttemptAt: null, attempts: [] },
      ],
    };
    expect(traceLines(trace, 100)).toEqual([
      'update 42 of bot sol: queued at 2026-12-02T16:30:00.000Z for 3 routes',
      '  received again at 2026-12-02T16:30:05.000Z, dropped as a duplicate',
      '',
      'shop: delivered (delivery d-1)',
      '  #1  2026-12-02T16:30:00.000Z  delivered  200  12 ms  "ok"',
      '',
      'site: retrying, next attempt at 2026-12-02T16:30:02.000Z (delivery d-2)',
      '  #1  2026-12-02T16:30:00.000Z  retry  timeout  5000 ms  -',
      '',
      'slow: queued (delivery d-3)',
      '  no attempt yet',
    ]);
    const ignored = { ...trace, status: 'ignored' as const, duplicatesAt: [], deliveries: [] };
    expect(traceLines(ignored)).toEqual([
      'update 42 of bot sol: ignored at 2026-12-02T16:30:00.000Z, no route matched it',
    ]);
  });

  it('lists attempts under a header, each line within the width', () => {
    const lines = attemptLines(
      [
        attempt({ attempt: 2, outcome: 'dead', status: 400, body: 'no'.repeat(200) }),
        attempt({ updateId: 7, at: T0 - 1_000 }),
      ],
      100,
    );
    expect(lines[0]).toMatch(
      /^AT\s+BOT\s+UPDATE\s+ATTEMPT\s+OUTCOME\s+STATUS\s+DURATION\s+ANSWER$/,
    );
    expect(lines[1]).toMatch(
      /^2026-12-02T16:30:00.000Z\s+sol\s+42\s+#2\s+dead\s+400\s+12 ms\s+"nono/,
    );
    expect(lines[1]).toHaveLength(100);
    expect(lines[1].endsWith('…')).toBe(true);
    expect(lines[2]).toMatch(/\s7\s+#1\s+delivered\s+200\s+12 ms\s+"ok"$/);
  });
});
