import fc from 'fast-check';
import { DEFAULT_OUTBOUND, type OutboundConfig } from '@relaygram/config';
import { retryAfterSeconds } from './budget-math';
import { budgetParams, type BudgetParams } from './budget-params';
import type { CallPlan, ChatKind } from './call-plan';
import { LocalBudget } from './local-budget';
import { pauseScope } from './pause-scope';

const T0 = 1_000_000;

function params(overrides: Partial<OutboundConfig> = {}, transitMs = 100): BudgetParams {
  return budgetParams({ ...DEFAULT_OUTBOUND, ...overrides }, transitMs);
}

function plan(chat?: string | number, cost = 1): CallPlan {
  if (chat === undefined) return { paced: true, cost };
  const key = String(chat);
  const kind: ChatKind = key.startsWith('-') || key.startsWith('@') ? 'group' : 'private';
  return { paced: true, chat: { key, kind }, cost };
}

/** Slots (ms from T0) the budget gives calls made at T0, or 'refused'. */
function slots(budget: LocalBudget, p: BudgetParams, calls: CallPlan[], now = T0) {
  return calls.map((call) => {
    const d = budget.reserve('bot', call, p, now);
    return d.ok ? d.slot - T0 : 'refused';
  });
}

describe('budgetParams', () => {
  it('turns Telegram defaults into bins of 3 sends per 100 ms and 1 s between chat sends', () => {
    const p = params();
    expect(p).toMatchObject({
      binCapacity: 3,
      binWidthMs: 100,
      chatIntervalMs: 1000,
      chatBurst: 3,
      groupLimit: 20,
      groupWindowMs: 60_000,
      maxWaitMs: 5000,
    });
    expect(p.ringSize * p.binWidthMs).toBeGreaterThan(p.maxWaitMs + 2 * p.binWidthMs);
  });

  it('keeps whole sends per bin for slow and fast bots', () => {
    expect(params({ perSecond: 2 })).toMatchObject({ binCapacity: 1, binWidthMs: 500 });
    expect(params({ perSecond: 0.5 })).toMatchObject({ binCapacity: 1, binWidthMs: 2000 });
    expect(params({ perSecond: 100_000 })).toMatchObject({ binCapacity: 10_000, binWidthMs: 100 });
  });
});

describe('the chat budget (GCRA)', () => {
  it('lets a burst go at once, then one send per interval', () => {
    const p = params();
    const calls = Array.from({ length: 5 }, () => plan(42));
    // The third waits the transit allowance: the first may land that late on Telegram's clock.
    expect(slots(new LocalBudget(), p, calls)).toEqual([0, 0, 100, 1100, 2100]);
  });

  it('refills while the chat is quiet', () => {
    const budget = new LocalBudget();
    const p = params();
    slots(budget, p, [plan(42), plan(42), plan(42)]);
    expect(budget.reserve('bot', plan(42), p, T0 + 10_000)).toMatchObject({
      ok: true,
      slot: T0 + 10_000,
    });
  });

  it('keeps chats apart', () => {
    const calls = [42, 42, 42, 42, 43].map((chat) => plan(chat));
    expect(slots(new LocalBudget(), params(), calls)).toEqual([0, 0, 100, 1100, 0]);
  });

  it('refuses what would wait past max_wait, with the time it could go', () => {
    const budget = new LocalBudget();
    const p = params({ maxWaitMs: 2_000 });
    expect(
      slots(
        budget,
        p,
        Array.from({ length: 5 }, () => plan(7)),
      ),
    ).toEqual([0, 0, 100, 1100, 'refused']);
    const refused = budget.reserve('bot', plan(7), p, T0);
    expect(refused).toEqual({ ok: false, retryAt: T0 + 2100, binding: 'chat' });
    expect(retryAfterSeconds(2100, 0)).toBe(3);
  });

  it('never gives a chat a slot before its previous one', () => {
    const budget = new LocalBudget();
    const p = params({ perSecond: 1 });
    // The bot budget pushes the second send of chat 1 to the next bin, 1 s later...
    expect(slots(budget, p, [plan(2), plan(1)])).toEqual([0, 1000]);
    // ...and a later send to chat 1 comes after it, though its burst has room.
    expect(slots(budget, p, [plan(1)], T0 + 10)).toEqual([2000]);
  });
});

describe('the group budget (per minute)', () => {
  it('allows per_group_per_minute sends in any minute, then waits for the oldest to age', () => {
    const p = params({
      perSecond: 1000,
      perChatPerSecond: 100,
      chatBurst: 100,
      perGroupPerMinute: 5,
      maxWaitMs: 61_000,
    });
    const calls = Array.from({ length: 7 }, () => plan(-100));
    expect(slots(new LocalBudget(), p, calls)).toEqual([0, 0, 0, 0, 0, 60_100, 60_100]);
  });

  it('applies to @username chats and not to users', () => {
    const p = params({
      perSecond: 1000,
      perChatPerSecond: 100,
      chatBurst: 100,
      perGroupPerMinute: 2,
    });
    const budget = new LocalBudget();
    expect(slots(budget, p, [plan('@news'), plan('@news'), plan('@news')])).toEqual([
      0,
      0,
      'refused',
    ]);
    expect(slots(budget, p, [plan(5), plan(5), plan(5)])).toEqual([0, 0, 0]);
  });

  it('charges an album by its items', () => {
    const p = params({
      perSecond: 1000,
      perChatPerSecond: 100,
      chatBurst: 100,
      perGroupPerMinute: 10,
      maxWaitMs: 61_000,
    });
    const budget = new LocalBudget();
    expect(slots(budget, p, [plan(-1, 8), plan(-1, 2), plan(-1, 3)])).toEqual([0, 0, 60_100]);
  });
});

describe('the bot budget (a calendar of bins)', () => {
  it('fills each bin with bin_capacity sends, then the next', () => {
    const calls = Array.from({ length: 7 }, (_, i) => plan(100 + i));
    expect(slots(new LocalBudget(), params(), calls)).toEqual([0, 0, 0, 100, 100, 100, 200]);
  });

  it('lets a call to a quiet chat go while another waits for its busy chat', () => {
    const budget = new LocalBudget();
    const p = params();
    slots(budget, p, [plan(1), plan(1), plan(1), plan(1)]);
    // Chat 1's next send waits 2.1 s, taking a bin then: the first bin still has room.
    expect(slots(budget, p, [plan(1), plan(2)])).toEqual([2100, 0]);
  });

  it('refuses when every bin up to max_wait is full', () => {
    const p = params({ perSecond: 10, maxWaitMs: 1000 });
    const budget = new LocalBudget();
    const results = slots(
      budget,
      p,
      Array.from({ length: 13 }, (_, i) => plan(i + 1)),
    );
    expect(results.slice(0, 11)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(results.slice(11)).toEqual(['refused', 'refused']);
    expect(budget.reserve('bot', plan(99), p, T0)).toEqual({
      ok: false,
      retryAt: T0 + 1100,
      binding: 'bot',
    });
  });

  it('puts an album larger than a bin alone in an empty bin', () => {
    const p = params({ perSecond: 10 });
    expect(slots(new LocalBudget(), p, [plan(1), plan(2, 10), plan(3)])).toEqual([0, 100, 200]);
  });

  it('paces calls that name no chat by the bot budget alone', () => {
    const p = params({ perSecond: 10 });
    expect(slots(new LocalBudget(), p, [plan(), plan(), plan()])).toEqual([0, 100, 200]);
  });
});

describe('pauses', () => {
  it('holds a paused chat until its pause ends; other chats go on', () => {
    const budget = new LocalBudget();
    const p = params();
    expect(budget.pause('bot', '7', 3000, T0)).toEqual({ scope: 'chat', until: T0 + 3000 });
    expect(budget.reserve('bot', plan(7), p, T0)).toEqual({
      ok: true,
      slot: T0 + 3000,
      bin: (T0 + 3000) / 100,
      binding: 'pause',
    });
    expect(budget.reserve('bot', plan(8), p, T0)).toMatchObject({ ok: true, slot: T0 });
  });

  it('refuses during a pause longer than max_wait, with retry_after to its end', () => {
    const budget = new LocalBudget();
    budget.pause('bot', '7', 30_000, T0);
    const decision = budget.reserve('bot', plan(7), params(), T0);
    expect(decision).toEqual({ ok: false, retryAt: T0 + 30_000, binding: 'pause' });
  });

  it('pauses the whole bot when three chats got a 429 within 2 s, or the call named no chat', () => {
    const budget = new LocalBudget();
    expect(budget.pause('bot', '1', 1000, T0).scope).toBe('chat');
    expect(budget.pause('bot', '2', 1000, T0 + 500).scope).toBe('chat');
    expect(budget.pause('bot', '3', 4000, T0 + 1000).scope).toBe('bot');
    expect(budget.reserve('bot', plan(50), params(), T0 + 1000)).toMatchObject({
      slot: T0 + 5000,
      binding: 'pause',
    });
    expect(new LocalBudget().pause('bot', undefined, 1000, T0).scope).toBe('bot');
  });

  it('forgets 429s older than the window', () => {
    const budget = new LocalBudget();
    budget.pause('bot', '1', 1000, T0);
    budget.pause('bot', '2', 1000, T0 + 100);
    expect(budget.pause('bot', '3', 1000, T0 + 2500).scope).toBe('chat');
    expect(pauseScope('9', 3)).toBe('bot');
    expect(pauseScope('9', 2)).toBe('chat');
  });
});

describe('memory of the local budget', () => {
  it('forgets chats whose buckets are full again', () => {
    const budget = new LocalBudget();
    const p = params({ perSecond: 1000 });
    for (let chat = 1; chat <= 500; chat++) budget.reserve('bot', plan(chat), p, T0);
    expect(budget.size('bot')).toBeGreaterThan(500);
    budget.reserve('bot', plan(1), p, T0 + 60_000);
    expect(budget.size('bot')).toBeLessThan(5);
  });
});

/**
 * Whatever calls come, at whatever times, every schedule the budgets make keeps the
 * limits: per chat the token bucket, per group the sliding minute, per bot each bin's
 * capacity; and no call is given a slot past max_wait.
 */
describe('schedules made by the budgets', () => {
  const call = fc.record({
    at: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 4000 })),
    chat: fc.constantFrom(1, 2, 3, -10, -11, '@chan', undefined),
    cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 10 })),
  });

  it('hold every limit', () => {
    fc.assert(
      fc.property(
        fc.array(call, { minLength: 1, maxLength: 150 }),
        fc.record({
          perSecond: fc.constantFrom(5, 10, 30, 1000),
          perChatPerSecond: fc.constantFrom(1, 2, 5, 100),
          chatBurst: fc.integer({ min: 1, max: 4 }),
          perGroupPerMinute: fc.integer({ min: 3, max: 20 }),
          maxWaitMs: fc.constantFrom(0, 1000, 5000),
        }),
        (calls, limits) => {
          const p = params(limits);
          const budget = new LocalBudget();
          let now = T0;
          const given: {
            chat?: string;
            kind?: ChatKind;
            slot: number;
            cost: number;
            at: number;
          }[] = [];
          for (const c of calls) {
            now += c.at;
            const planned = plan(c.chat, c.cost);
            const d = budget.reserve('bot', planned, p, now);
            if (!d.ok) {
              expect(d.retryAt).toBeGreaterThan(now + p.maxWaitMs);
              continue;
            }
            expect(d.slot).toBeGreaterThanOrEqual(now);
            expect(d.slot).toBeLessThanOrEqual(now + p.maxWaitMs);
            given.push({
              chat: planned.chat?.key,
              kind: planned.chat?.kind,
              slot: d.slot,
              cost: c.cost,
              at: now,
            });
          }
          checkChats(given, p);
          checkGroups(given, p);
          checkBins(given, p);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a busy group', () => {
  it('never gets more than per_group_per_minute sends in a minute', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 6000 }), { minLength: 10, maxLength: 120 }),
        fc.integer({ min: 2, max: 6 }),
        (gaps, perGroupPerMinute) => {
          const p = params({
            perSecond: 1000,
            perChatPerSecond: 100,
            chatBurst: 10,
            perGroupPerMinute,
          });
          const budget = new LocalBudget();
          let now = T0;
          const given: { chat?: string; kind?: ChatKind; slot: number; cost: number }[] = [];
          for (const gap of gaps) {
            now += gap;
            const d = budget.reserve('bot', plan(-5), p, now);
            if (d.ok) given.push({ chat: '-5', kind: 'group', slot: d.slot, cost: 1 });
          }
          checkGroups(given, p);
        },
      ),
      { numRuns: 200 },
    );
  });
});

function byChat<T extends { chat?: string }>(given: T[]): Map<string, T[]> {
  const chats = new Map<string, T[]>();
  for (const g of given)
    if (g.chat !== undefined) chats.set(g.chat, [...(chats.get(g.chat) ?? []), g]);
  return chats;
}

/** GCRA conformance of each chat's slots: bucket of chat_burst, one more per interval. */
function checkChats(given: { chat?: string; slot: number; cost: number }[], p: BudgetParams): void {
  for (const [, sends] of byChat(given)) {
    let tat = Number.NEGATIVE_INFINITY;
    const tau = (p.chatBurst - 1) * p.chatIntervalMs;
    let last = Number.NEGATIVE_INFINITY;
    for (const send of sends) {
      expect(send.slot).toBeGreaterThanOrEqual(last);
      last = send.slot;
      const charged = Math.min(send.cost, p.chatBurst);
      // Each unit of an album, one after another at the same moment.
      for (let unit = 0; unit < charged; unit++) {
        expect(send.slot).toBeGreaterThanOrEqual(tat - tau - 1e-6);
        tat = Math.max(tat, send.slot) + p.chatIntervalMs;
      }
    }
  }
}

function checkGroups(
  given: { chat?: string; kind?: ChatKind; slot: number; cost: number }[],
  p: BudgetParams,
): void {
  for (const [, sends] of byChat(given.filter((g) => g.kind === 'group'))) {
    const units = sends.flatMap((s) =>
      new Array<number>(Math.min(s.cost, p.groupLimit)).fill(s.slot),
    );
    for (let i = p.groupLimit; i < units.length; i++) {
      expect(units[i] - units[i - p.groupLimit]).toBeGreaterThanOrEqual(p.groupWindowMs);
    }
  }
}

function checkBins(given: { slot: number; cost: number }[], p: BudgetParams): void {
  const bins = new Map<number, { count: number; calls: number }>();
  for (const g of given) {
    const bin = Math.floor(g.slot / p.binWidthMs);
    const held = bins.get(bin) ?? { count: 0, calls: 0 };
    bins.set(bin, { count: held.count + g.cost, calls: held.calls + 1 });
  }
  for (const held of bins.values()) {
    if (held.calls > 1) expect(held.count).toBeLessThanOrEqual(p.binCapacity);
  }
}
