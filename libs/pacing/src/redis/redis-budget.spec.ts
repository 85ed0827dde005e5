import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { DEFAULT_OUTBOUND, type OutboundConfig } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { createRedis, waitForRedis, type RedisClient } from '@relaygram/queue';
import { deleteKeys } from '@relaygram/testing';
import { budgetParams, type BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { LocalBudget } from '../budget/local-budget';
import { RedisBudget } from './redis-budget';

const T0 = 1_700_000_000_000;

function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through jest');
  return url;
}

async function connect(name: string): Promise<RedisClient> {
  const redis = createRedis(redisUrl(), { connectionName: `test-pacing-${name}` });
  if (!(await waitForRedis(redis))) throw new Error('no Redis answers');
  return redis;
}

function plan(chat?: number | string, cost = 1): CallPlan {
  if (chat === undefined) return { paced: true, cost };
  const key = String(chat);
  return { paced: true, chat: { key, kind: /^[-@]/.test(key) ? 'group' : 'private' }, cost };
}

function params(overrides: Partial<OutboundConfig>): BudgetParams {
  return budgetParams({ ...DEFAULT_OUTBOUND, ...overrides });
}

describe('the pacing script in Redis', () => {
  const clients: RedisClient[] = [];
  const prefixes: string[] = [];
  let redis: RedisClient;

  function freshKeys(): OutboundKeys {
    const prefix = `t-pacing-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    return new OutboundKeys(prefix);
  }

  beforeAll(async () => {
    redis = await connect('main');
    clients.push(redis);
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(redis, `${prefix}:*`);
    await Promise.all(clients.map((client) => client.quit()));
  });

  /**
   * The script and budget-math.ts are two writings of one algorithm: the local fallback
   * must decide what Redis would. Random calls at random times, both asked the same.
   */
  it('decides every call as the local budget does', async () => {
    const call = fc.record({
      gap: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 5_000 })),
      chat: fc.constantFrom(1, 2, 3, -10, -11, '@chan', undefined),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 10 })),
      pause: fc.option(
        fc.record({
          chat: fc.constantFrom(1, 2, 3, -10, '@chan', undefined),
          ms: fc.integer({ min: 1, max: 3 }),
        }),
        { freq: 4 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 60 }),
        fc.record({
          perSecond: fc.constantFrom(5, 10, 30, 1000),
          perChatPerSecond: fc.constantFrom(0.5, 1, 2, 4),
          chatBurst: fc.integer({ min: 1, max: 4 }),
          perGroupPerMinute: fc.integer({ min: 2, max: 20 }),
          maxWaitMs: fc.constantFrom(0, 1_000, 5_000),
        }),
        async (calls, limits) => {
          const p = params(limits);
          const shared = new RedisBudget(redis, freshKeys());
          const local = new LocalBudget();
          let now = T0;
          for (const c of calls) {
            now += c.gap;
            if (c.pause) {
              const chat = c.pause.chat === undefined ? undefined : String(c.pause.chat);
              const there = await shared.pause('bot', chat, c.pause.ms * 1000, now);
              const here = local.pause('bot', chat, c.pause.ms * 1000, now);
              expect(there.scope).toBe(here.scope);
            }
            const planned = plan(c.chat, c.cost);
            const there = await shared.reserve('bot', planned, p, now);
            const here = local.reserve('bot', planned, p, now);
            const expected = here.ok
              ? { ok: true, waitMs: Math.ceil(here.slot - now), binding: here.binding }
              : { ok: false, retryInMs: Math.ceil(here.retryAt - now), binding: here.binding };
            expect({ ...there, binding: there.binding }).toEqual(expected);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('shares one budget between replicas: concurrent calls from four connections keep every limit', async () => {
    const keys = freshKeys();
    const replicas: RedisBudget[] = [];
    for (let i = 0; i < 4; i++) {
      const client = await connect(`replica-${i}`);
      clients.push(client);
      replicas.push(new RedisBudget(client, keys));
    }
    const p = params({ perSecond: 20, perChatPerSecond: 2, chatBurst: 2, maxWaitMs: 3_000 });
    const chats = [11, 12, 13, 14, 15, 16, 17, -18, -19, -20];
    // One clock for all, so the schedule can be checked exactly; the calls still race.
    const now = T0;
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const chat = chats[i % chats.length] as number;
        const replica = replicas[i % replicas.length] as RedisBudget;
        return { chat, decision: await replica.reserve('bot', plan(chat), p, now) };
      }),
    );
    const slots = results.flatMap((r) =>
      r.decision.ok ? [{ chat: r.chat, slot: now + r.decision.waitMs }] : [],
    );
    // The calendar holds 2 sends per 100 ms bin: 31 bins from now to now + 3 s, all used.
    expect(slots).toHaveLength(62);
    const perBin = new Map<number, number>();
    for (const { slot } of slots)
      perBin.set(Math.floor(slot / 100), (perBin.get(Math.floor(slot / 100)) ?? 0) + 1);
    expect(Math.max(...perBin.values())).toBe(2);
    // Each chat keeps its GCRA: bucket of 2, one more per 500 ms (k - j sends apart, at
    // least (k - j) x 500 ms less the 500 ms of the bucket).
    for (const chat of chats) {
      const times = slots
        .filter((s) => s.chat === chat)
        .map((s) => s.slot)
        .sort((a, b) => a - b);
      expect(times.length).toBeGreaterThan(2);
      for (let k = 1; k < times.length; k++) {
        for (let j = 0; j < k; j++) {
          expect((times[k] as number) - (times[j] as number)).toBeGreaterThanOrEqual(
            (k - j) * 500 - 500,
          );
        }
      }
    }
  });

  it('sends the reservations of a busy moment together, each still its own script', async () => {
    const client = await connect('batched');
    clients.push(client);
    let pipelines = 0;
    const original = client.pipeline.bind(client);
    client.pipeline = ((...args: Parameters<typeof original>) => {
      pipelines++;
      return original(...args);
    }) as typeof client.pipeline;
    const shared = new RedisBudget(client, freshKeys());
    // A pipeline borrows the client's script function: only a call on the client itself
    // went alone.
    let alone = 0;
    type ScriptCall = (this: unknown, ...args: unknown[]) => unknown;
    const scripts = client as unknown as Record<string, ScriptCall>;
    const script = scripts.rgOutboundAcquire as ScriptCall;
    scripts.rgOutboundAcquire = function (this: unknown, ...args: unknown[]) {
      if (this === client) alone++;
      return script.apply(this, args);
    };
    const p = params({ perSecond: 1000, perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 60_000 });
    const now = T0;
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => shared.reserve('bot', plan(5), p, now)),
    );
    // Asked in one turn of the event loop: all 50 went as one pipeline, none alone.
    expect(pipelines).toBe(1);
    expect(alone).toBe(0);
    // One chat with a burst of 1: a second plus the transit allowance apart. Every
    // script saw the ones before it.
    const waits = decisions.map((d) => (d.ok ? d.waitMs : -1));
    expect(waits.slice(0, 3)).toEqual([0, 1100, 2200]);
    expect(new Set(waits).size).toBe(50);

    // One asked on its own goes alone; those asked while it is on its way go together
    // once it is answered.
    const first = shared.reserve('bot', plan(6), p, now);
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 5 }, (_, i) => shared.reserve('bot', plan(7 + i), p, now));
    await Promise.all([first, ...later]);
    expect(alone).toBe(1);
    expect(pipelines).toBe(2);
  });

  it('keeps a bot calendar of bounded size, and expires a quiet bot', async () => {
    const keys = freshKeys();
    const shared = new RedisBudget(redis, keys);
    const p = params({ perSecond: 10, maxWaitMs: 2_000 });
    for (let i = 0; i < 500; i++) await shared.reserve('bot', plan(i + 1), p, T0 + i * 7);
    expect(await redis.hlen(keys.bins('bot'))).toBeLessThanOrEqual(p.ringSize);
    const ttl = await redis.pttl(keys.bins('bot'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(p.maxWaitMs + 2 * p.binWidthMs + 1000);
    expect(await redis.pttl(keys.chat('bot', '1'))).toBeGreaterThan(0);
  });

  it('lists the pauses in force and reports how long one still lasts', async () => {
    const keys = freshKeys();
    const shared = new RedisBudget(redis, keys);
    await shared.pause('bot', '42', 3_000);
    await shared.pause('bot', undefined, 1_000);
    const pauses = await shared.pauses('bot');
    expect(pauses.chats).toEqual([{ chat: '42', until: expect.any(Number) }]);
    expect((pauses.chats[0]?.until ?? 0) - pauses.now).toBeGreaterThan(2_500);
    expect((pauses.botUntil ?? 0) - pauses.now).toBeGreaterThan(500);
    expect(await shared.pausedFor('bot', '42')).toBeGreaterThan(2_500);
    expect(await shared.pausedFor('bot', '43')).toBeGreaterThan(500);
    expect(await shared.pausedFor('bot', '43')).toBeLessThanOrEqual(1_000);
    expect(await shared.pausedFor('other-bot', '42')).toBe(0);
  });
});
