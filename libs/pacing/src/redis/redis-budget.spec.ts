import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { DEFAULT_OUTBOUND, type OutboundConfig } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { TimeoutError } from '@relaygram/observability';
import { createRedis, startRedisServer, waitForRedis, type RedisClient } from '@relaygram/queue';
import { deleteKeys, eventually } from '@relaygram/testing';
import { broadcastParams, budgetParams, type BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { LocalBudget } from '../budget/local-budget';
import { RedisBudget, type SharedDecision } from './redis-budget';
import { BUSY_GAP_MS, MAX_BATCH } from './reservation-batcher';

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
      broadcast: fc.boolean(),
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
          broadcastShare: fc.constantFrom(0, 0.3, 0.8, 1),
        }),
        async (calls, limits) => {
          const p = params(limits);
          const b = broadcastParams(p, limits.broadcastShare);
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
            const there = await shared.reserve('bot', planned, c.broadcast ? b : p, now);
            const here = local.reserve('bot', planned, c.broadcast ? b : p, now);
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

  /** Counts the batch script's calls, and the pipelines, of a client of its own. */
  async function countingClient(name: string) {
    const client = await connect(name);
    clients.push(client);
    const counts = { scripts: 0, pipelines: 0 };
    /** When each script call or pipeline of them left. */
    const sentAt: number[] = [];
    const original = client.pipeline.bind(client);
    client.pipeline = ((...args: Parameters<typeof original>) => {
      counts.pipelines++;
      sentAt.push(performance.now());
      return original(...args);
    }) as typeof client.pipeline;
    const shared = new RedisBudget(client, freshKeys());
    type ScriptCall = (this: unknown, ...args: unknown[]) => unknown;
    const scripts = client as unknown as Record<string, ScriptCall>;
    const script = scripts.rgOutboundAcquireBatch as ScriptCall;
    scripts.rgOutboundAcquireBatch = function (this: unknown, ...args: unknown[]) {
      counts.scripts++;
      // A pipeline calls this too (ioredis copies the client's scripts): it is timed once, above.
      if (this === client) sentAt.push(performance.now());
      return script.apply(this, args);
    };
    return { client, shared, counts, sentAt };
  }

  it('sends the reservations of a busy moment as one script call, each decided in order', async () => {
    const { shared, counts } = await countingClient('batched');
    const p = params({ perSecond: 1000, perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 60_000 });
    const now = T0;
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => shared.reserve('bot', plan(5), p, now)),
    );
    // Asked in one turn of the event loop: one script call, no pipeline.
    expect(counts).toEqual({ scripts: 1, pipelines: 0 });
    // One chat with a burst of 1: a second plus the transit allowance apart. Every
    // reservation saw the ones before it, in the order they were asked.
    const waits = decisions.map((d) => (d.ok ? d.waitMs : -1));
    expect(waits).toEqual(Array.from({ length: 50 }, (_, i) => i * 1100));

    // One asked on its own goes alone; those asked while it is on its way go together
    // once it is answered. (Asked after the busy batch's gap, which would hold it.)
    await new Promise((resolve) => setTimeout(resolve, BUSY_GAP_MS + 1));
    const first = shared.reserve('bot', plan(6), p, now);
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 5 }, (_, i) => shared.reserve('bot', plan(7 + i), p, now));
    await Promise.all([first, ...later]);
    expect(counts).toEqual({ scripts: 3, pipelines: 0 });
  });

  it('sends at once while the process is not busy, and at the end of the turn while it is', async () => {
    const { shared, counts } = await countingClient('idle');
    const p = params({});
    // Script calls made by the time the current turn of the event loop ends.
    const atTurnEnd = () =>
      new Promise<number>((resolve) => setImmediate(() => resolve(counts.scripts)));
    let sentByTurnEnd = atTurnEnd();
    await shared.reserve('bot', plan(1), p);
    expect(await sentByTurnEnd).toBe(1);
    // A batch of several: busy, so the next one waits for the rest of its turn.
    await Promise.all(Array.from({ length: 10 }, (_, i) => shared.reserve('bot', plan(i + 2), p)));
    expect(counts.scripts).toBe(2);
    sentByTurnEnd = atTurnEnd();
    const next = shared.reserve('bot', plan(20), p);
    expect(await sentByTurnEnd).toBe(2);
    await next;
    expect(counts.scripts).toBe(3);
  });

  it('while busy, sends a batch no sooner than BUSY_GAP_MS after the one before', async () => {
    const { shared, sentAt } = await countingClient('gap');
    const p = params({ perSecond: 100_000, perChatPerSecond: 100_000, chatBurst: 100_000 });
    await Promise.all([shared.reserve('bot', plan(1), p), shared.reserve('bot', plan(2), p)]);
    // A busy process: two asked in every turn of the event loop (so every batch holds
    // several), each turn some 50 µs of work, for 200 turns.
    const asked: Promise<unknown>[] = [];
    for (let turn = 0; turn < 200; turn++) {
      asked.push(shared.reserve('bot', plan(1), p), shared.reserve('bot', plan(2), p));
      const until = performance.now() + 0.05;
      while (performance.now() < until);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(asked);
    // After the first batch, each left at least the gap after the one before, timed on
    // the clock the batcher keeps it by; without the gap they leave a round trip apart.
    const busy = sentAt.slice(1);
    expect(busy.length).toBeGreaterThan(2);
    expect(BUSY_GAP_MS).toBe(1);
    for (let i = 1; i < busy.length; i++) {
      expect((busy[i] as number) - (busy[i - 1] as number)).toBeGreaterThanOrEqual(0.99);
    }
  });

  it('splits a very large moment into script calls of at most MAX_BATCH, sent as one pipeline', async () => {
    const { shared, counts } = await countingClient('large');
    const p = params({ perSecond: 1000, perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 600_000 });
    const asked = 2 * MAX_BATCH + 50;
    const decisions = await Promise.all(
      Array.from({ length: asked }, () => shared.reserve('bot', plan(5), p, T0)),
    );
    expect(counts).toEqual({ scripts: 3, pipelines: 1 });
    expect(decisions.map((d) => (d.ok ? d.waitMs : -1))).toEqual(
      Array.from({ length: asked }, (_, i) => i * 1100),
    );
  });

  /**
   * A batch holds what separate calls would: each reservation, decided in the order
   * asked, is what the local budget decides for the same calls one after another,
   * whatever the mix of bots, chats, groups and albums, pauses in force, and calls
   * taking a second slot (a shorter max_wait, as after a pause).
   */
  it('decides a batch as the local budget decides its calls one by one', async () => {
    const roomy = params({ perSecond: 30, maxWaitMs: 5_000 });
    const tight = params({
      perSecond: 5,
      perChatPerSecond: 1,
      chatBurst: 2,
      perGroupPerMinute: 3,
      maxWaitMs: 2_000,
    });
    // A bot's config, the same with what is left of max_wait for a second slot, and its
    // broadcasts' (more sections of the same bot, which must share its calendar).
    const configs: Record<string, [BudgetParams, BudgetParams, BudgetParams]> = {
      a: [roomy, { ...roomy, maxWaitMs: 1_500 }, broadcastParams(roomy, 0.5)],
      b: [tight, { ...tight, maxWaitMs: 700 }, broadcastParams(tight, 0)],
    };
    const ask = fc.record({
      bot: fc.constantFrom('a', 'b'),
      kind: fc.constantFrom(0, 1, 2),
      chat: fc.constantFrom(1, 2, -10, -11, '@chan', undefined),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 10 })),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(ask, { minLength: 1, maxLength: 40 }),
        fc.option(fc.constantFrom('1', '-10', undefined), { nil: null }),
        async (asks, paused) => {
          const shared = new RedisBudget(redis, freshKeys());
          const local = new LocalBudget();
          if (paused !== null) {
            await shared.pause('a', paused, 1_000, T0);
            local.pause('a', paused, 1_000, T0);
          }
          const p = (a: (typeof asks)[number]) => (configs[a.bot] ?? [roomy])[a.kind];
          const there = await Promise.all(
            asks.map((a) => shared.reserve(a.bot, plan(a.chat, a.cost), p(a) as BudgetParams, T0)),
          );
          asks.forEach((a, i) => {
            const here = local.reserve(a.bot, plan(a.chat, a.cost), p(a) as BudgetParams, T0);
            const expected = here.ok
              ? { ok: true, waitMs: Math.ceil(here.slot - T0), binding: here.binding }
              : { ok: false, retryInMs: Math.ceil(here.retryAt - T0), binding: here.binding };
            const decision = there[i] as SharedDecision;
            expect({ ...decision, binding: decision.binding }).toEqual(expected);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fails a reservation that meets an error in Redis alone, and keeps the others of its batch', async () => {
    const keys = freshKeys();
    const shared = new RedisBudget(redis, keys);
    // A chat key holding a hash: its GET fails with WRONGTYPE inside the script.
    await redis.hset(keys.chat('bot', '2'), 'x', '1');
    const p = params({ perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 5_000 });
    const [one, two, three] = await Promise.allSettled([
      shared.reserve('bot', plan(1), p, T0),
      shared.reserve('bot', plan(2), p, T0),
      shared.reserve('bot', plan(1), p, T0),
    ]);
    expect(one).toEqual({ status: 'fulfilled', value: { ok: true, waitMs: 0 } });
    expect(two).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/WRONGTYPE/) },
    });
    expect(three).toEqual({
      status: 'fulfilled',
      value: { ok: true, waitMs: 1_100, binding: 'chat' },
    });
    // What the batch took is written: the chat's next slot comes after both.
    expect(await shared.reserve('bot', plan(1), p, T0)).toEqual({
      ok: true,
      waitMs: 2_200,
      binding: 'chat',
    });
  });

  it('bounds each reservation: unanswered in time it fails, and one given up before it left is never sent', async () => {
    const server = await startRedisServer();
    const client = createRedis(server.url, { connectionName: 'test-pacing-frozen' });
    try {
      if (!(await waitForRedis(client))) throw new Error('no Redis answers');
      const keys = freshKeys();
      const shared = new RedisBudget(client, keys, 200);
      const p = params({});
      process.kill(server.pid as number, 'SIGSTOP');
      const asked = Date.now();
      const sent = shared.reserve('bot', plan(1), p);
      await new Promise((resolve) => setImmediate(resolve));
      // Queued behind the one on its way to the frozen Redis.
      const queued = shared.reserve('bot', plan(2), p);
      await expect(sent).rejects.toBeInstanceOf(TimeoutError);
      await expect(queued).rejects.toBeInstanceOf(TimeoutError);
      expect(Date.now() - asked).toBeLessThan(1_000);
      process.kill(server.pid as number, 'SIGCONT');
      // Redis runs what it was sent once it thaws; the queued one never left.
      await eventually(async () => (await client.exists(keys.chat('bot', '1'))) === 1, {
        what: 'the reservation sent before the freeze to run',
        timeoutMs: 5_000,
        intervalMs: 50,
      });
      expect(await shared.reserve('bot', plan(3), p)).toMatchObject({ ok: true });
      expect(await client.exists(keys.chat('bot', '2'))).toBe(0);
    } finally {
      if (server.pid) process.kill(server.pid, 'SIGCONT');
      client.disconnect();
      await server.stop();
    }
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
