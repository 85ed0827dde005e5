import { randomUUID } from 'node:crypto';
import { DEFAULT_OUTBOUND, Secret, type BotConfig, type OutboundConfig } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import {
  createRedis,
  startRedisServer,
  waitForRedis,
  type LocalRedis,
  type RedisClient,
} from '@relaygram/queue';
import { eventually } from '@relaygram/testing';
import { OutboundPacer, type OutboundPacerOptions } from './outbound-pacer';

function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through jest');
  return url;
}

function bot(outbound: Partial<OutboundConfig> = {}, id = 'pace-bot'): BotConfig {
  return {
    id,
    tokenEnv: 'UNUSED',
    token: new Secret('1:unused'),
    numericId: '1',
    mode: 'polling',
    allowedUpdates: ['message'],
    default: true,
    outbound: { ...DEFAULT_OUTBOUND, ...outbound },
  };
}

const send = (chat: number | string, text = 'hi') => ({ chat_id: chat, text });

/** Resolves to 'hung' if the promise takes longer than `ms`: no call may hang on Redis. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms))),
  ]).finally(() => clearTimeout(timer));
}

interface Counted {
  redis: RedisClient;
  /** Commands the client sent since the last reset. */
  commands(): number;
  reset(): void;
}

/** A real client whose commands are counted (the commands still go to Redis). */
async function countedClient(url: string, name: string, wait = true): Promise<Counted> {
  const redis = createRedis(url, { connectionName: `test-pacer-${name}` });
  if (wait && !(await waitForRedis(redis))) throw new Error('no Redis answers');
  let count = 0;
  const original = redis.sendCommand.bind(redis) as (...args: unknown[]) => unknown;
  redis.sendCommand = ((...args: unknown[]) => {
    count++;
    return original(...args);
  }) as typeof redis.sendCommand;
  return { redis, commands: () => count, reset: () => (count = 0) };
}

describe('OutboundPacer on a shared Redis', () => {
  const pacers: OutboundPacer[] = [];
  const clients: RedisClient[] = [];
  let keys: OutboundKeys;

  async function pacer(name: string, options: OutboundPacerOptions = {}) {
    const counted = await countedClient(redisUrl(), name);
    clients.push(counted.redis);
    const made = new OutboundPacer(counted.redis, keys, options);
    pacers.push(made);
    return { pacer: made, ...counted };
  }

  beforeEach(() => {
    keys = new OutboundKeys(`t-pacer-${randomUUID().slice(0, 8)}`);
  });

  afterAll(async () => {
    await Promise.all(pacers.map((p) => p.close()));
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('sends what may go at once after one script, and nothing else', async () => {
    const { pacer: a, commands } = await pacer('once');
    const result = await a.acquire(bot(), 'sendMessage', send(1));
    expect(result).toMatchObject({ kind: 'go', budget: 'none', plan: { chat: { key: '1' } } });
    expect(commands()).toBe(1);
  });

  it('waits for a connection still being made instead of pacing alone', async () => {
    const fresh = await countedClient(redisUrl(), 'fresh', false);
    clients.push(fresh.redis);
    const made = new OutboundPacer(fresh.redis, keys);
    pacers.push(made);
    expect(fresh.redis.status).not.toBe('ready');
    expect(await made.acquire(bot(), 'sendMessage', send(2))).toMatchObject({ kind: 'go' });
    expect(made.mode).toBe('shared');
  });

  it('sleeps once until the slot of a call that must wait, then checks once for a pause', async () => {
    const { pacer: a, commands, reset } = await pacer('sleeps');
    const limits = bot({ perChatPerSecond: 2, chatBurst: 1 });
    const firstAsked = Date.now();
    await a.acquire(limits, 'sendMessage', send(5));
    reset();
    const asked = Date.now();
    const result = await a.acquire(limits, 'sendMessage', send(5));
    expect(result).toMatchObject({ kind: 'go', budget: 'chat' });
    // 500 ms between sends, plus the transit allowance of the first, counted from the
    // first call: what passed before the second asked is not waited again.
    expect(result.kind === 'go' && result.waitedMs).toBeGreaterThanOrEqual(
      590 - (asked - firstAsked),
    );
    // The reservation, and the re-check at the slot: no polling while it slept.
    expect(commands()).toBe(2);
  });

  it('takes a new slot for a call its busy process woke too late to send at its own', async () => {
    const { pacer: a } = await pacer('late');
    const limits = bot({ perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 5_000 });
    await a.acquire(limits, 'sendMessage', send(11));
    const second = a.acquire(limits, 'sendMessage', send(11));
    // Keep the event loop busy across the second call's slot (1.1 s from now).
    setTimeout(() => {
      const until = Date.now() + 500;
      while (Date.now() < until) {
        // a long synchronous task, as a GC pause or a starved CPU would be
      }
    }, 1_000);
    const result = await second;
    expect(result).toMatchObject({ kind: 'go' });
    // Sent at its slot it would have closed up on the next send; the new slot is a
    // second after the stale one.
    expect(result.kind === 'go' && result.waitedMs).toBeGreaterThanOrEqual(2_100);
  });

  it('still sends when Redis is merely slow to answer every time', async () => {
    const slow = await countedClient(redisUrl(), 'slow');
    clients.push(slow.redis);
    const original = slow.redis.sendCommand.bind(slow.redis) as (...args: unknown[]) => unknown;
    // Every command reaches the real Redis 150 ms late: more than the transit allowance.
    slow.redis.sendCommand = ((...args: unknown[]) =>
      new Promise((resolve) =>
        setTimeout(() => resolve(original(...args)), 150),
      )) as typeof slow.redis.sendCommand;
    const made = new OutboundPacer(slow.redis, keys, { redisTimeoutMs: 1_000 });
    pacers.push(made);
    const before = slow.commands();
    const result = await made.acquire(bot(), 'sendMessage', send(12));
    expect(result).toMatchObject({ kind: 'go' });
    expect(made.mode).toBe('shared');
    // The reservation came back late, so the call took a second one, and then went.
    expect(slow.commands() - before).toBe(2);
    expect(result.kind === 'go' && result.waitedMs).toBeGreaterThanOrEqual(300);
  });

  it("answers at once, with Telegram's retry_after, a call that would wait past max_wait", async () => {
    const { pacer: a } = await pacer('refuses');
    const limits = bot({ perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 2_000 });
    await a.acquire(limits, 'sendMessage', send(6));
    const second = a.acquire(limits, 'sendMessage', send(6));
    const third = await a.acquire(limits, 'sendMessage', send(6));
    expect(third).toMatchObject({ kind: 'refused', retryAfter: 3, budget: 'chat' });
    expect(await second).toMatchObject({ kind: 'go', budget: 'chat' });
  });

  it("paces a broadcast on its share of the bot's calendar; with a share of 0, refuses it", async () => {
    const { pacer: a } = await pacer('broadcast');
    const sharing = bot({ perSecond: 30, broadcastShare: 0.8 });
    expect(a.broadcastParams(sharing)).toEqual({ ...a.params(sharing), binCapacity: 2 });
    expect(a.broadcastParams(sharing)).toBe(a.broadcastParams(sharing));
    expect(await a.acquireBroadcast(sharing, 'sendMessage', send(31))).toMatchObject({
      kind: 'go',
      budget: 'none',
    });
    const closed = bot({ broadcastShare: 0 });
    // No bin has room up to max_wait (5 s): retry after the bin that follows it.
    expect(await a.acquireBroadcast(closed, 'sendMessage', send(32))).toMatchObject({
      kind: 'refused',
      retryAfter: 6,
      budget: 'bot',
    });
    expect(await a.acquire(closed, 'sendMessage', send(32))).toMatchObject({ kind: 'go' });
    expect(await a.acquireBroadcast(closed, 'getMe', {})).toEqual({ kind: 'unpaced' });
  });

  it('leaves alone calls that send nothing, and bots with pacing off', async () => {
    const { pacer: a, commands } = await pacer('unpaced');
    expect(await a.acquire(bot(), 'sendChatAction', { chat_id: 1, action: 'typing' })).toEqual({
      kind: 'unpaced',
    });
    expect(await a.acquire(bot(), 'getMe', {})).toEqual({ kind: 'unpaced' });
    expect(await a.acquire(bot({ enabled: false }), 'sendMessage', send(1))).toEqual({
      kind: 'unpaced',
    });
    expect(commands()).toBe(0);
  });

  it('a 429 one replica met pauses that chat on another, even for a call already waiting', async () => {
    const { pacer: a } = await pacer('replica-a');
    const { pacer: b } = await pacer('replica-b');
    const limits = bot({ perChatPerSecond: 2, chatBurst: 1 });
    await a.acquire(limits, 'sendMessage', send(9));
    const waiting = a.acquire(limits, 'sendMessage', send(9));
    const report = await b.reportTooManyRequests(
      limits,
      { paced: true, chat: { key: '9', kind: 'private' }, cost: 1 },
      2,
    );
    expect(report).toEqual({ scope: 'chat', pauseMs: 2_000 });
    // Another chat of the same bot keeps going on both replicas.
    expect(await b.acquire(limits, 'sendMessage', send(10))).toMatchObject({ budget: 'none' });
    const paused = await waiting;
    expect(paused).toMatchObject({ kind: 'go', budget: 'pause' });
    expect(paused.kind === 'go' && paused.waitedMs).toBeGreaterThanOrEqual(1_900);
    // And a new call to that chat on either replica waits for the pause too.
    const after = await b.acquire(limits, 'sendMessage', send(9));
    expect(after).toMatchObject({ kind: 'go' });
    expect((await a.pauses(limits.id)).chats).toEqual([]);
  });

  it('pauses the whole bot when three chats got a 429 within 2 s', async () => {
    const { pacer: a } = await pacer('bot-wide');
    const limits = bot();
    const scopes: string[] = [];
    for (const chat of ['1', '2', '3']) {
      const report = await a.reportTooManyRequests(
        limits,
        { paced: true, chat: { key: chat, kind: 'private' }, cost: 1 },
        30,
      );
      scopes.push(report.scope);
    }
    expect(scopes).toEqual(['chat', 'chat', 'bot']);
    const pauses = await a.pauses(limits.id);
    expect(pauses.mode).toBe('shared');
    expect((pauses.botUntil ?? 0) - pauses.now).toBeGreaterThan(29_000);
    expect(await a.acquire(limits, 'sendMessage', send(77))).toMatchObject({
      kind: 'refused',
      budget: 'pause',
      retryAfter: 30,
    });
  });
});

/**
 * Redis of its own, to stop and freeze: the pacer falls back to its process's own
 * budget at once, never hangs a call, says it is degraded, and shares again after.
 */
describe('OutboundPacer when Redis fails', () => {
  let server: LocalRedis;
  let counted: Counted;
  let pacer: OutboundPacer;
  const logs: string[] = [];

  beforeEach(async () => {
    server = await startRedisServer();
    counted = await countedClient(server.url, 'outage');
    pacer = new OutboundPacer(
      counted.redis,
      new OutboundKeys(`t-outage-${randomUUID().slice(0, 8)}`),
      {
        redisTimeoutMs: 200,
        probeEveryMs: 100,
        // A waiting call whose timer fires more than the transit allowance late takes a
        // new slot, once (see acquire); on a busy machine the chat's budget would then
        // refuse it within max_wait. 500 ms keeps the sleeps' lateness out of the test.
        transitMs: 500,
        logger: { warn: (_f, m) => logs.push(m), info: (_f, m) => logs.push(m) },
      },
    );
  });

  afterEach(async () => {
    if (server.pid) process.kill(server.pid, 'SIGCONT');
    await pacer.close();
    counted.redis.disconnect();
    await server.stop();
  });

  it('paces alone, never waiting for a frozen Redis, and shares again once it answers', async () => {
    const limits = bot({ perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 2_000 });
    expect(await pacer.acquire(limits, 'sendMessage', send(1))).toMatchObject({ kind: 'go' });
    process.kill(server.pid as number, 'SIGSTOP');
    // Three calls that each wait for Redis no longer than the timeout: then it is an outage.
    const first = await Promise.all(
      [2, 3, 4].map((chat) => within(pacer.acquire(limits, 'sendMessage', send(chat)), 2_000)),
    );
    expect(first).toEqual([
      expect.objectContaining({ kind: 'go' }),
      expect.objectContaining({ kind: 'go' }),
      expect.objectContaining({ kind: 'go' }),
    ]);
    expect(pacer.mode).toBe('degraded');
    expect(logs.at(-1)).toContain('degraded');

    // Degraded: the process's own budget, the bot's limits, without asking Redis.
    counted.reset();
    expect(await within(pacer.acquire(limits, 'sendMessage', send(8)), 2_000)).toMatchObject({
      kind: 'go',
    });
    const second = within(pacer.acquire(limits, 'sendMessage', send(8)), 3_000);
    expect(await pacer.acquire(limits, 'sendMessage', send(8))).toMatchObject({
      kind: 'refused',
      budget: 'chat',
    });
    expect(await second).toMatchObject({ kind: 'go', budget: 'chat' });
    const pauses = await pacer.pauses(limits.id);
    expect(pauses.mode).toBe('degraded');
    // Only the probe talks to Redis meanwhile (one PING at a time).
    expect(counted.commands()).toBeLessThanOrEqual(30);

    process.kill(server.pid as number, 'SIGCONT');
    await eventually(() => pacer.mode === 'shared', {
      what: 'shared pacing again',
      timeoutMs: 5_000,
      intervalMs: 50,
    });
    expect(logs.at(-1)).toContain('shared again');
    counted.reset();
    expect(await pacer.acquire(limits, 'sendMessage', send(12))).toMatchObject({ kind: 'go' });
    // Its reservation in Redis, and the re-check if it had to wait: Redis ran the calls
    // that timed out once it thawed, and they took the first bin.
    expect(counted.commands()).toBeGreaterThanOrEqual(1);
    expect(counted.commands()).toBeLessThanOrEqual(2);
  });

  it('degrades at once when the connection is lost, and a 429 then pauses locally', async () => {
    const limits = bot({ maxWaitMs: 1_000 });
    const port = Number(new URL(server.url).port);
    await server.stop();
    await eventually(() => counted.redis.status !== 'ready', {
      what: 'the connection to drop',
      timeoutMs: 5_000,
      intervalMs: 50,
    });
    const result = await within(pacer.acquire(limits, 'sendMessage', send(1)), 2_000);
    expect(result).toMatchObject({ kind: 'go' });
    expect(pacer.mode).toBe('degraded');
    // The local budget refuses broadcasts with a share of 0, as Redis does.
    const closed = bot({ broadcastShare: 0 });
    expect(await pacer.acquireBroadcast(closed, 'sendMessage', send(2))).toMatchObject({
      kind: 'refused',
      budget: 'bot',
    });
    const report = await pacer.reportTooManyRequests(
      limits,
      { paced: true, chat: { key: '1', kind: 'private' }, cost: 1 },
      5,
    );
    expect(report.scope).toBe('chat');
    expect(await pacer.acquire(limits, 'sendMessage', send(1))).toMatchObject({
      kind: 'refused',
      budget: 'pause',
      retryAfter: 5,
    });
    expect((await pacer.pauses(limits.id)).chats).toEqual([
      { chat: '1', until: expect.any(Number) },
    ]);

    server = await startRedisServer({ port });
    await eventually(() => pacer.mode === 'shared', {
      what: 'shared pacing again',
      timeoutMs: 10_000,
      intervalMs: 50,
    });
  });
});
