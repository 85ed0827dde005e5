import { randomUUID } from 'node:crypto';
import { DEFAULT_OUTBOUND, type OutboundConfig } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { createRedis, waitForRedis, type RedisClient } from '@relaygram/queue';
import { deleteKeys } from '@relaygram/testing';
import { broadcastParams, budgetParams, type BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { LocalBudget } from '../budget/local-budget';
import { RedisBudget, type SharedDecision } from './redis-budget';

/** A whole number of 100 ms bins, so the first bin starts at T0. */
const T0 = 1_700_000_000_000;

function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through jest');
  return url;
}

function both(overrides: Partial<OutboundConfig>): { p: BudgetParams; b: BudgetParams } {
  const outbound = { ...DEFAULT_OUTBOUND, ...overrides };
  const p = budgetParams(outbound);
  return { p, b: broadcastParams(p, outbound.broadcastShare) };
}

const to = (chat: number, cost = 1): CallPlan => ({
  paced: true,
  chat: { key: String(chat), kind: 'private' },
  cost,
});

const waits = (decisions: SharedDecision[]) => decisions.map((d) => (d.ok ? d.waitMs : 'refused'));

describe('broadcasts in the pacing script', () => {
  const prefixes: string[] = [];
  let redis: RedisClient;
  let scripts = 0;

  /** A budget with keys of its own, on the client whose batch script calls are counted. */
  function fresh(): { shared: RedisBudget; keys: OutboundKeys } {
    const keys = new OutboundKeys(`t-pacing-bc-${randomUUID().slice(0, 8)}`);
    prefixes.push(keys.prefix);
    return { shared: new RedisBudget(redis, keys), keys };
  }

  beforeAll(async () => {
    redis = createRedis(redisUrl(), { connectionName: 'test-pacing-broadcast' });
    if (!(await waitForRedis(redis))) throw new Error('no Redis answers');
    // The first budget defines the script on the client; it is counted from then on.
    fresh();
    type ScriptCall = (this: unknown, ...args: unknown[]) => unknown;
    const named = redis as unknown as Record<string, ScriptCall>;
    const script = named.rgOutboundAcquireBatch as ScriptCall;
    named.rgOutboundAcquireBatch = function (this: unknown, ...args: unknown[]) {
      scripts++;
      return script.apply(this, args);
    };
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  it('stops broadcasts alone at their share of a bin', async () => {
    const { b } = both({ perSecond: 2000, broadcastShare: 0.8 });
    const { shared } = fresh();
    const decisions: SharedDecision[] = [];
    for (let i = 0; i < 200; i++) decisions.push(await shared.reserve('bot', to(i), b, T0));
    // 160 of each bin of 200: 1600 a second.
    expect(waits(decisions)).toEqual([
      ...Array.from({ length: 160 }, () => 0),
      ...Array.from({ length: 40 }, () => 100),
    ]);
    const { b: small } = both({ perSecond: 30, broadcastShare: 0.8 });
    const { shared: other } = fresh();
    const few: SharedDecision[] = [];
    for (let i = 0; i < 5; i++) few.push(await other.reserve('bot', to(i), small, T0));
    expect(waits(few)).toEqual([0, 0, 100, 100, 200]);
  });

  it('still puts an interactive call in a bin broadcasts filled to their share', async () => {
    const { p, b } = both({ perSecond: 30, broadcastShare: 0.8, maxWaitMs: 300 });
    const { shared } = fresh();
    for (let i = 0; i < 8; i++) await shared.reserve('bot', to(i), b, T0);
    // Bins 0 to 3 hold 2 broadcasts each; the next is refused, max_wait ending in bin 3.
    expect(await shared.reserve('bot', to(8), b, T0)).toEqual({
      ok: false,
      retryInMs: 400,
      binding: 'bot',
    });
    const interactive: SharedDecision[] = [];
    for (let i = 0; i < 5; i++) interactive.push(await shared.reserve('bot', to(20 + i), p, T0));
    expect(waits(interactive)).toEqual([0, 100, 200, 300, 'refused']);
  });

  it('counts broadcasts and interactive calls of one batch in one calendar', async () => {
    const { p, b } = both({ perSecond: 30, broadcastShare: 0.8 });
    const { shared } = fresh();
    const mix = [b, b, p, b, p, p, b, b, p];
    const before = scripts;
    const decisions = await Promise.all(mix.map((q, i) => shared.reserve('bot', to(i), q, T0)));
    expect(scripts - before).toBe(1);
    // Bin 0: b b p; bin 1: b p p; bin 2: b b, then p fills it.
    expect(waits(decisions)).toEqual([0, 0, 0, 100, 100, 100, 200, 200, 200]);
    // The same calls asked one by one, in the same order, of the local budget.
    const local = new LocalBudget();
    const alone = mix.map((q, i) => local.reserve('bot', to(i), q, T0));
    expect(alone.map((d) => (d.ok ? d.slot - T0 : 'refused'))).toEqual(waits(decisions));
  });

  it('refuses every broadcast with a share of 0 and takes nothing of the calendar', async () => {
    const { p, b } = both({ perSecond: 30, broadcastShare: 0, maxWaitMs: 1_000 });
    const { shared, keys } = fresh();
    const refused = await Promise.all([1, 2].map((chat) => shared.reserve('bot', to(chat), b, T0)));
    expect(refused).toEqual([
      { ok: false, retryInMs: 1_100, binding: 'bot' },
      { ok: false, retryInMs: 1_100, binding: 'bot' },
    ]);
    expect(await redis.exists(keys.bins('bot'), keys.chat('bot', '1'))).toBe(0);
    expect(await shared.reserve('bot', to(1), p, T0)).toEqual({ ok: true, waitMs: 0 });
  });
});
