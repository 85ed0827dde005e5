import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { BROADCAST_CHUNK } from '@relaygram/contracts';
import type { RunningApp } from '@relaygram/platform';
import type { BroadcastRecord, BroadcastStore } from '@relaygram/queue';
import { TelegramEmulator, eventually, redisUrl, type RecordedCall } from '@relaygram/testing';
import { request } from 'undici';
import { DispatcherHarness, sleep } from './support/dispatcher-harness';

/**
 * Broadcasts (issue 16) sent by a real dispatcher, against the emulator and a real Redis.
 * Two bots: `fast` with room to spare (its runs take a second or two), and `slow` with
 * `per_second: 200` and `broadcast_share: 0.5`, so its broadcasts go at 100 a second:
 * long enough to pause, cancel or stop in the middle, and to measure.
 */
describe('dispatcher: broadcasts', () => {
  let h: DispatcherHarness;
  let emulator: TelegramEmulator;
  let app: RunningApp;
  let store: BroadcastStore;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    h = await DispatcherHarness.create('broadcast', ['fast', 'slow']);
    store = h.fixture.broadcasts;
    emulator = await TelegramEmulator.start({ historyLimit: 100_000 });
    for (const bot of ['fast', 'slow']) {
      tokens[bot] = h.bots[bot];
      emulator.addBot({ token: tokens[bot], username: `${bot}_broadcast_bot` });
    }
    writeConfig(emulator.apiRoot);
    app = await h.start({ shutdownGraceMs: 3_000 });
  });

  afterAll(async () => {
    await h.cleanup();
    await emulator.stop();
  });

  /** The harness writes bots without `outbound`: this config gives each its budgets. */
  function writeConfig(apiBase: string): void {
    writeFileSync(
      h.configPath,
      [
        'redis:',
        `  url: ${redisUrl()}`,
        `  prefix: ${h.prefix}`,
        'telegram:',
        `  api_base: ${apiBase}`,
        'bots:',
        '  - id: fast',
        '    token_env: FAST_TOKEN',
        '    mode: polling',
        '    outbound: { per_second: 5000, per_chat_per_second: 10, broadcast_share: 0.8 }',
        '  - id: slow',
        '    token_env: SLOW_TOKEN',
        '    mode: polling',
        '    outbound: { per_second: 200, broadcast_share: 0.5 }',
        // Never used: broadcasts need no route.
        'routes:',
        '  - name: unused',
        '    target_url: http://127.0.0.1:9/unused',
        '',
      ].join('\n'),
    );
  }

  /** Chat ids `from`, `from + 1`... as the API stores them: text. */
  const chats = (from: number, count: number): string[] =>
    Array.from({ length: count }, (_, i) => String(from + i));

  /** Creates, fills and starts a broadcast of a sendMessage with `text`, as the gateway does. */
  async function broadcast(bot: string, chatIds: string[], text: string): Promise<string> {
    const id = randomUUID();
    const upload = randomUUID();
    expect(await store.create({ bot, client: 'shop', id, upload })).toBe('created');
    for (let i = 0; i < chatIds.length; i += BROADCAST_CHUNK) {
      await store.append(bot, id, upload, chatIds.slice(i, i + BROADCAST_CHUNK));
    }
    const call = { method: 'sendMessage', params: { text } };
    expect(await store.start(bot, id, upload, call)).toBe('running');
    return id;
  }

  async function record(bot: string, id: string): Promise<BroadcastRecord> {
    const found = await store.read(bot, id);
    if (!found) throw new Error(`broadcast ${id} is gone`);
    return found;
  }

  async function ended(bot: string, id: string, timeoutMs = 30_000): Promise<BroadcastRecord> {
    await eventually(async () => (await record(bot, id)).status === 'done', {
      what: `broadcast ${id} done`,
      timeoutMs,
      intervalMs: 100,
    });
    return record(bot, id);
  }

  async function sentAtLeast(bot: string, id: string, n: number): Promise<void> {
    await eventually(async () => (await record(bot, id)).sent >= n, {
      what: `${n} sent`,
      timeoutMs: 20_000,
      intervalMs: 50,
    });
  }

  /** The emulator's answered sendMessage calls of a broadcast (its text), 200 or not. */
  const callsOf = (bot: string, text: string): RecordedCall[] =>
    emulator
      .calls(tokens[bot], { method: 'sendMessage' })
      .filter((call) => call.params.text === text && call.status !== undefined);

  /** Messages each chat received (answered 200). */
  function received(bot: string, text: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const call of callsOf(bot, text)) {
      if (call.status !== 200) continue;
      const chat = String(call.params.chat_id);
      counts.set(chat, (counts.get(chat) ?? 0) + 1);
    }
    return counts;
  }

  function expectOncePerChat(bot: string, text: string, chatIds: readonly string[]): void {
    const counts = received(bot, text);
    expect([...counts.keys()].sort()).toEqual([...chatIds].sort());
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
  }

  /** Waits until `sent` has not moved for `quietMs`; its value then. */
  async function settledSent(bot: string, id: string, quietMs = 1_500): Promise<number> {
    let last = (await record(bot, id)).sent;
    for (let round = 0; round < 20; round++) {
      await sleep(quietMs);
      const now = (await record(bot, id)).sent;
      if (now === last) return now;
      last = now;
    }
    throw new Error(`broadcast ${id} kept sending`);
  }

  it('sends each recipient once, and lists those who blocked the bot with Telegram’s answer', async () => {
    const all = chats(10_001, 1_000);
    const blocked = all.filter((_, i) => i % 10 === 3);
    emulator.blockChats(tokens.fast, blocked);
    const text = 'order update (a)';
    const id = await broadcast('fast', all, text);

    const done = await ended('fast', id);
    expect(done).toMatchObject({
      status: 'done',
      total: 1_000,
      sent: 900,
      blocked: 100,
      failed: 0,
    });
    expectOncePerChat(
      'fast',
      text,
      all.filter((chat) => !blocked.includes(chat)),
    );
    const listed = await store.failures('fast', id, 'blocked', 0, 500);
    expect(listed.total).toBe(100);
    expect(listed.items.map((item) => item.chat_id).sort()).toEqual([...blocked].sort());
    for (const item of listed.items) {
      expect(item).toEqual({
        chat_id: item.chat_id,
        error_code: 403,
        description: 'Forbidden: bot was blocked by the user',
      });
    }
    expect((await store.failures('fast', id, 'failed', 0, 10)).total).toBe(0);

    const metrics = await (await request(`${app.adminUrl}/metrics`)).body.text();
    expect(metrics).toMatch(
      /relaygram_broadcast_sends_total\{bot="fast",outcome="sent"[^}]*\} 900\n/,
    );
    expect(metrics).toMatch(
      /relaygram_broadcast_sends_total\{bot="fast",outcome="blocked"[^}]*\} 100\n/,
    );
    expect(metrics).toMatch(/relaygram_broadcast_pending\{bot="fast"[^}]*\} 0\n/);
    // A line when it starts and one when it ends, a few for the blocked: never one per send.
    // (The end is seen at the next listing of the running broadcasts.)
    const ofThis = () => h.logs.filter((line) => line.broadcast_id === id);
    await eventually(() => ofThis().some((line) => line.msg === 'broadcast done'), {
      what: 'the line saying it is done',
    });
    expect(ofThis().length).toBeLessThan(10);
    expect(ofThis().find((line) => line.msg === 'broadcast done')).toMatchObject({
      bot: 'fast',
      status: 'done',
      sent: 900,
      blocked: 100,
    });
    expect(JSON.stringify(h.logs)).not.toContain(tokens.fast);
  }, 60_000);

  it('stops sending while paused, finishes once resumed, and stays stopped once cancelled', async () => {
    const all = chats(20_001, 600);
    const text = 'weekly digest (b)';
    const id = await broadcast('slow', all, text);
    await sentAtLeast('slow', id, 100);
    expect(await store.control('slow', id, 'pause')).toEqual({ ok: true, status: 'paused' });
    // The sends already in flight finish; then nothing more goes.
    const paused = await settledSent('slow', id);
    expect(paused).toBeLessThan(600);
    await sleep(1_000);
    expect((await record('slow', id)).sent).toBe(paused);
    expect(callsOf('slow', text).length).toBe(paused);

    expect(await store.control('slow', id, 'resume')).toEqual({ ok: true, status: 'running' });
    const done = await ended('slow', id);
    expect(done).toMatchObject({ sent: 600, blocked: 0, failed: 0 });
    expectOncePerChat('slow', text, all);

    const cancelledText = 'weekly digest, cancelled (b)';
    const cancelled = await broadcast('slow', chats(21_001, 600), cancelledText);
    await sentAtLeast('slow', cancelled, 50);
    expect(await store.control('slow', cancelled, 'cancel')).toEqual({
      ok: true,
      status: 'cancelled',
    });
    const stopped = await settledSent('slow', cancelled);
    expect(stopped).toBeLessThan(600);
    await sleep(1_000);
    expect(await record('slow', cancelled)).toMatchObject({ status: 'cancelled', sent: stopped });
    // Every send that went out was counted, once.
    expect(callsOf('slow', cancelledText).length).toBe(stopped);
    expect([...received('slow', cancelledText).values()].every((n) => n === 1)).toBe(true);
  }, 90_000);

  it('pauses on a refused token (401), fails no one, and finishes once resumed', async () => {
    emulator.failUnauthorized(tokens.slow, 'always');
    const all = chats(70_001, 300);
    const text = 'revoked token (g)';
    let id = '';
    try {
      id = await broadcast('slow', all, text);
      await eventually(async () => (await record('slow', id)).status === 'paused', {
        what: 'the broadcast paused',
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      const paused = await record('slow', id);
      expect(paused).toMatchObject({ sent: 0, blocked: 0, failed: 0 });
      expect(paused.pausedReason).toBe(
        "Telegram refused the bot's token (401 Unauthorized): every send would fail. Fix the token, then resume.",
      );
      // Its sends in flight at the pause were released, not given a try.
      await sleep(1_000);
      expect(await h.fixture.redis.hlen(h.fixture.ctx.keys.broadcastTries('slow', id))).toBe(0);
      const pauses = h.logs.filter(
        (line) =>
          line.broadcast_id === id &&
          line.msg === "broadcast paused: Telegram refused the bot's token",
      );
      expect(pauses).toEqual([
        expect.objectContaining({ bot: 'slow', reason: paused.pausedReason }),
      ]);
    } finally {
      emulator.clearFailures(tokens.slow);
    }
    expect(await store.control('slow', id, 'resume')).toEqual({ ok: true, status: 'running' });
    const done = await ended('slow', id);
    expect(done).toMatchObject({ sent: 300, blocked: 0, failed: 0 });
    expect(done.pausedReason).toBeUndefined();
    expectOncePerChat('slow', text, all);
  }, 60_000);

  it('delivers each recipient once through 429s, 5xx and dropped connections', async () => {
    for (let i = 0; i < 8; i++) {
      emulator.failTooManyRequests(tokens.fast, 1, 'sendMessage', 1);
      emulator.failServerError(tokens.fast, i % 2 ? 502 : 500, 'sendMessage', 1);
      emulator.fail(tokens.fast, { method: 'sendMessage', drop: true });
    }
    const all = chats(30_001, 500);
    const text = 'flash sale (c)';
    const id = await broadcast('fast', all, text);

    const done = await ended('fast', id);
    expect(done).toMatchObject({ total: 500, sent: 500, blocked: 0, failed: 0 });
    expectOncePerChat('fast', text, all);
    const forced = callsOf('fast', text).filter((call) => call.status !== 200);
    expect(forced.map((call) => call.status).sort()).toEqual(
      [
        ...Array(8).fill(0),
        ...Array(8).fill(429),
        ...Array(4).fill(500),
        ...Array(4).fill(502),
      ].sort(),
    );
    const metrics = await (await request(`${app.adminUrl}/metrics`)).body.text();
    const retried = /relaygram_broadcast_sends_total\{bot="fast",outcome="retry"[^}]*\} (\d+)/.exec(
      metrics,
    );
    expect(Number(retried?.[1])).toBeGreaterThanOrEqual(24);
    expect(metrics).toMatch(/relaygram_telegram_429_total\{bot="fast"/);
  }, 60_000);

  it('keeps to its share of the bot’s budget: 100 a second of per_second 200 at 0.5', async () => {
    const all = chats(40_001, 800);
    const text = 'rate check (d)';
    const id = await broadcast('slow', all, text);
    await ended('slow', id);
    expectOncePerChat('slow', text, all);

    // On the emulator's clock: when each send arrived.
    const times = callsOf('slow', text)
      .map((call) => call.time)
      .sort((a, b) => a - b);
    let busiest = 0;
    for (let start = 0, end = 0; end < times.length; end++) {
      while (times[end] - times[start] >= 1_000) start++;
      busiest = Math.max(busiest, end - start + 1);
    }
    const rate = ((times.length - 1) * 1_000) / (times[times.length - 1] - times[0]);
    process.stdout.write(
      `broadcast rate at a budget share of 100/s: ${rate.toFixed(1)}/s on average, ${busiest} in the busiest second\n`,
    );
    // 10 sends per 100 ms bin; a window may straddle 11 bins, and a send land late.
    expect(busiest).toBeLessThanOrEqual(125);
    expect(rate).toBeLessThanOrEqual(110);
    expect(rate).toBeGreaterThan(50);
  }, 60_000);

  it('shares its slots fairly: a slow bot’s broadcast does not hold up a fast one', async () => {
    const slowChats = chats(60_001, 800);
    const slow = await broadcast('slow', slowChats, 'slow and steady (f)');
    await sentAtLeast('slow', slow, 20);
    const fastChats = chats(61_001, 2_000);
    const fast = await broadcast('fast', fastChats, 'fast lane (f)');
    // Sends of the slow one wait for their slots: were they to pile up in the 64 slots,
    // the fast one would go at the slow one's pace, 100 a second, and end after it.
    await ended('fast', fast, 8_000);
    expect((await record('slow', slow)).status).toBe('running');
    await ended('slow', slow);
    expectOncePerChat('fast', 'fast lane (f)', fastChats);
    expectOncePerChat('slow', 'slow and steady (f)', slowChats);
  }, 60_000);

  it('on shutdown releases what has not gone, settles the rest, and the next dispatcher finishes', async () => {
    const all = chats(50_001, 500);
    const text = 'shutdown (e)';
    const id = await broadcast('slow', all, text);
    await sentAtLeast('slow', id, 60);
    await h.stop(app);

    const stopped = await record('slow', id);
    expect(stopped.status).toBe('running');
    expect(stopped.sent).toBeLessThan(500);
    // Every send that reached Telegram was settled before the process exited...
    expect(callsOf('slow', text).length).toBe(stopped.sent);
    // ...and every claim it held was handed back, claimable at once.
    const claims = await h.fixture.redis.zrange(
      h.fixture.ctx.keys.broadcastClaims('slow', id),
      0,
      -1,
      'WITHSCORES',
    );
    const scores = claims.filter((_, i) => i % 2 === 1).map(Number);
    expect(scores.filter((score) => score !== 0)).toEqual([]);

    app = await h.start({ shutdownGraceMs: 3_000 }, 'b');
    await ended('slow', id);
    expectOncePerChat('slow', text, all);
  }, 60_000);
});
