import fc from 'fast-check';
import { DEFAULT_OUTBOUND, type OutboundConfig } from '@relaygram/config';
import { broadcastParams, budgetParams, type BudgetParams } from './budget-params';
import type { CallPlan } from './call-plan';
import { LocalBudget } from './local-budget';

const T0 = 1_000_000;

function both(overrides: Partial<OutboundConfig> = {}): [BudgetParams, BudgetParams] {
  const outbound = { ...DEFAULT_OUTBOUND, ...overrides };
  const p = budgetParams(outbound);
  return [p, broadcastParams(p, outbound.broadcastShare)];
}

const to = (chat: number, cost = 1): CallPlan => ({
  paced: true,
  chat: { key: String(chat), kind: 'private' },
  cost,
});

/** Slots (ms from T0) given to calls asked at T0, each to a chat of its own, or 'refused'. */
function slots(budget: LocalBudget, calls: [BudgetParams, number?][], first = 1) {
  return calls.map(([p, cost], i) => {
    const d = budget.reserve('bot', to(first + i, cost), p, T0);
    return d.ok ? d.slot - T0 : 'refused';
  });
}

describe('broadcastParams', () => {
  it('keeps the share of each bin, rounded down to whole sends', () => {
    // 30/s: 2 of 3 per 100 ms bin, 20/s; 2000/s: 160 of 200, 1600/s exactly.
    expect(both({ perSecond: 30, broadcastShare: 0.8 })[1].binCapacity).toBe(2);
    expect(both({ perSecond: 2000, broadcastShare: 0.8 })[1].binCapacity).toBe(160);
    expect(both({ perSecond: 1000, broadcastShare: 0.29 })[1].binCapacity).toBe(29);
    expect(both({ perSecond: 30, broadcastShare: 1 })[1].binCapacity).toBe(3);
  });

  it('gives at least one send per bin while the share is above 0, none at 0', () => {
    expect(both({ perSecond: 10, broadcastShare: 0.8 })[1].binCapacity).toBe(1);
    expect(both({ perSecond: 30, broadcastShare: 0.1 })[1].binCapacity).toBe(1);
    expect(both({ perSecond: 30, broadcastShare: 0 })[1].binCapacity).toBe(0);
  });

  it("changes nothing but the bin's capacity: broadcasts count in the bot's own calendar", () => {
    const [p, b] = both({ perSecond: 45, broadcastShare: 0.5 });
    expect({ ...b, binCapacity: p.binCapacity }).toEqual(p);
    expect(b.binCapacity).toBe(2);
  });
});

describe('broadcasts in the local budget', () => {
  it('take at most their share of a bin, and leave the rest to interactive calls', () => {
    const [p, b] = both({ perSecond: 30, broadcastShare: 0.8 });
    const budget = new LocalBudget();
    expect(slots(budget, [[b], [b], [b], [b], [b]])).toEqual([0, 0, 100, 100, 200]);
    // Every bin the broadcasts filled still has a send for an interactive call.
    expect(slots(budget, [[p], [p], [p], [p]], 10)).toEqual([0, 100, 200, 200]);
    expect(slots(budget, [[b]], 20)).toEqual([300]);
  });

  it('do not go into a bin interactive calls have filled past the share', () => {
    const [p, b] = both({ perSecond: 30, broadcastShare: 0.8 });
    const budget = new LocalBudget();
    expect(slots(budget, [[p], [p], [b], [b]])).toEqual([0, 0, 100, 100]);
  });

  it('put an album larger than their share alone in an empty bin, as any call does', () => {
    const [, b] = both({ perSecond: 30, broadcastShare: 0.8 });
    expect(slots(new LocalBudget(), [[b], [b, 3], [b, 2]])).toEqual([0, 100, 200]);
  });

  it('are all refused with a share of 0, with the time a full calendar would give', () => {
    const [p, b] = both({ perSecond: 30, broadcastShare: 0, maxWaitMs: 1_000 });
    const budget = new LocalBudget();
    expect(budget.reserve('bot', to(1), b, T0)).toEqual({
      ok: false,
      retryAt: T0 + 1_100,
      binding: 'bot',
    });
    expect(budget.size('bot')).toBe(0);
    expect(slots(budget, [[p], [p], [p]])).toEqual([0, 0, 0]);
  });

  /** Whatever the mix, no bin holds more broadcasts than the share, but for a lone album. */
  it('keep the rest of every bin for interactive calls, whatever the mix', () => {
    const call = fc.record({
      gap: fc.integer({ min: 0, max: 150 }),
      broadcast: fc.boolean(),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4 })),
    });
    fc.assert(
      fc.property(
        fc.array(call, { minLength: 1, maxLength: 120 }),
        fc.constantFrom(10, 30, 45, 100),
        fc.constantFrom(0, 0.3, 0.5, 0.8, 1),
        (calls, perSecond, broadcastShare) => {
          const [p, b] = both({ perSecond, broadcastShare, chatBurst: 100, perChatPerSecond: 100 });
          const budget = new LocalBudget();
          const held = new Map<number, number>();
          let now = T0;
          calls.forEach((c, i) => {
            now += c.gap;
            const d = budget.reserve('bot', to(i, c.cost), c.broadcast ? b : p, now);
            if (!d.ok) return;
            const before = held.get(d.bin) ?? 0;
            if (c.broadcast) {
              expect(b.binCapacity).toBeGreaterThan(0);
              expect(before + c.cost <= b.binCapacity || before === 0).toBe(true);
            }
            held.set(d.bin, before + c.cost);
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
