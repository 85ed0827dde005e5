import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigOrThrow } from '@relaygram/config';
import {
  DEAD_LETTER_RETENTION_MS,
  DeadReason,
  laneId,
  OUTBOX_ROUTE,
  type LaneKey,
} from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { newDeliveryId } from '../lanes/update-enqueuer';
import { decodeEntry } from '../lanes/delivery-entry';
import { laneResolverFor } from './config-lane-resolver';
import type { LaneResolver } from './dead-letter-store';

const body = (updateId: number, chatId: number) =>
  Buffer.from(
    JSON.stringify({
      update_id: updateId,
      message: { chat: { id: chatId }, text: `#${updateId}` },
    }),
  );

const chatLane: LaneResolver = (letter) => ({
  lane: { kind: 'chat', chatId: JSON.parse(letter.update.toString()).message.chat.id },
});

describe('DeadLetterStore', () => {
  let f: QueueFixture;

  beforeEach(async () => {
    f = await createQueueFixture('dead');
  });
  afterEach(() => f.cleanup());

  /** Enqueue one update and kill it at once with `reason`, dead at `deadAt`. */
  async function kill(
    updateId: number,
    options: {
      route?: string;
      bot?: string;
      chatId?: number;
      reason?: DeadReason;
      deadAt?: number;
    } = {},
  ): Promise<string> {
    const route = options.route ?? 'shop';
    const bot = options.bot ?? 'bot-a';
    const chatId = options.chatId ?? 1;
    const lane = laneId(route, bot, { kind: 'chat', chatId });
    const deliveryId = newDeliveryId();
    const result = await f.enqueuer.enqueue({
      bot,
      updateId,
      body: body(updateId, chatId),
      deliveries: [{ route, lane, deliveryId }],
    });
    await result.jobsAdded;
    const head = await f.driver.finishOne(
      route,
      () => ({
        kind: 'dead',
        dead: { reason: options.reason ?? DeadReason.Rejected, attempts: 1, lastStatus: 400 },
      }),
      options.deadAt ?? Date.now(),
    );
    if (head.entry.deliveryId !== deliveryId)
      throw new Error('the update is not the head of its lane');
    return deliveryId;
  }

  it('lists newest first, filtered by route, bot and reason', async () => {
    const a = await kill(1, { route: 'shop', bot: 'bot-a', deadAt: 1000 });
    const b = await kill(2, {
      route: 'site',
      bot: 'bot-a',
      deadAt: 2000,
      reason: DeadReason.Poison,
    });
    const c = await kill(3, {
      route: 'shop',
      bot: 'bot-b',
      deadAt: 3000,
      reason: DeadReason.Poison,
    });
    const ids = async (filter = {}) => (await f.dead.list(filter)).items.map((l) => l.deliveryId);
    expect(await ids()).toEqual([c, b, a]);
    expect(await ids({ route: 'shop' })).toEqual([c, a]);
    expect(await ids({ bot: 'bot-a' })).toEqual([b, a]);
    expect(await ids({ reason: DeadReason.Poison })).toEqual([c, b]);
    expect(await ids({ route: 'shop', bot: 'bot-a' })).toEqual([a]);
    expect(await ids({ route: 'shop', reason: DeadReason.Rejected })).toEqual([a]);
    expect(await ids({ route: 'nowhere' })).toEqual([]);
  });

  it('pages with a cursor without losing or repeating letters that died in the same ms', async () => {
    const all: string[] = [];
    for (let i = 0; i < 23; i++) {
      // Groups of five share a time of death, so page boundaries fall inside a group.
      all.push(await kill(100 + i, { chatId: i, deadAt: 10_000 + Math.floor(i / 5) }));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await f.dead.list({}, 4, cursor);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((l) => l.deliveryId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(6);
    expect(seen).toHaveLength(23);
    expect(new Set(seen)).toEqual(new Set(all));
    const deadAts = [];
    for (const id of seen) deadAts.push((await f.dead.get(id))!.deadAt);
    expect(deadAts).toEqual([...deadAts].sort((x, y) => y - x));
    await expect(f.dead.list({}, 4, 'garbage')).rejects.toThrow(RangeError);
  });

  it('re-sends one letter to the tail of its lane with the same delivery id and fresh counters', async () => {
    const id = await kill(1, { chatId: 7 });
    // Meanwhile the lane got another update, which is waiting.
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 7 });
    await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 2,
      body: body(2, 7),
      deliveries: [{ route: 'shop', lane, deliveryId: newDeliveryId() }],
    });
    const before = Date.now();
    expect(await f.dead.replay(id, chatLane)).toBe('queued');
    expect(await f.dead.get(id)).toBeUndefined();
    expect((await f.dead.list()).items).toEqual([]);
    const entries = (await f.redis.lrangeBuffer(f.ctx.keys.lane(lane), 0, -1)).map(decodeEntry);
    expect(entries.map((e) => e.updateId)).toEqual([2, 1]);
    expect(entries[1].deliveryId).toBe(id);
    expect(entries[1].replayedAt).toBeGreaterThanOrEqual(before);
    expect(entries[1].body.equals(body(1, 7))).toBe(true);
    expect(await f.dead.replay(id, chatLane)).toBe('missing');
  });

  it('gives an idle lane a drain job when a letter is re-sent to it', async () => {
    const id = await kill(1, { chatId: 8 });
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 8 });
    expect(await f.lanes.generation(lane)).toBeUndefined();
    await f.dead.replay(id, chatLane);
    expect(await f.lanes.generation(lane)).toBeDefined();
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([lane]);
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('re-sends to the lane the resolver picks, and refuses what it refuses', async () => {
    const id = await kill(1, { chatId: 9 });
    const strict: LaneKey = { kind: 'shared' };
    expect(
      await f.dead.replay(id, () => ({ error: 'route shop is no longer configured' })),
    ).toEqual({
      error: 'route shop is no longer configured',
    });
    expect(await f.dead.get(id)).toBeDefined();
    expect(await f.dead.replay(id, () => ({ lane: strict }))).toBe('queued');
    expect(await f.lanes.length(laneId('shop', 'bot-a', strict))).toBe(1);
  });

  it('re-sends all letters of a route, oldest first', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await kill(10 + i, { chatId: 3, deadAt: 5000 + i }));
    const other = await kill(20, { route: 'site', chatId: 3 });
    const progress: string[] = [];
    const result = await f.dead.replayAll({ route: 'shop' }, chatLane, (_n, _o, id) =>
      progress.push(id),
    );
    expect(result).toEqual({ queued: 5, failed: 0 });
    expect(progress).toEqual(ids);
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 3 });
    const entries = (await f.redis.lrangeBuffer(f.ctx.keys.lane(lane), 0, -1)).map(decodeEntry);
    expect(entries.map((e) => e.updateId)).toEqual([10, 11, 12, 13, 14]);
    expect((await f.dead.list()).items.map((l) => l.deliveryId)).toEqual([other]);
  });

  it('deletes a letter and its index entries', async () => {
    const id = await kill(1, { route: 'shop', bot: 'bot-z' });
    expect(await f.dead.delete(id)).toBe(true);
    expect(await f.dead.get(id)).toBeUndefined();
    expect(await f.dead.countByRoute('shop')).toBe(0);
    expect(await f.dead.countByBot('bot-z')).toBe(0);
    expect(await f.redis.zcard(f.ctx.keys.deadIndex)).toBe(0);
    expect(await f.dead.delete(id)).toBe(false);
  });

  it('skips letters whose hash expired and drops them from the indexes', async () => {
    const gone = await kill(1, { deadAt: 1000 });
    const kept = await kill(2, { deadAt: 2000 });
    await f.redis.del(f.ctx.keys.deadLetter(gone));
    expect((await f.dead.list({ route: 'shop' })).items.map((l) => l.deliveryId)).toEqual([kept]);
    expect(await f.redis.zscore(f.ctx.keys.deadIndex, gone)).toBeNull();
    expect(await f.redis.zscore(f.ctx.keys.deadByRoute('shop'), gone)).toBeNull();
  });

  it('prunes index entries older than the retention', async () => {
    const now = Date.now();
    const old = await kill(1, {
      route: 'shop',
      bot: 'bot-a',
      deadAt: now - DEAD_LETTER_RETENTION_MS - 1,
    });
    const fresh = await kill(2, { route: 'shop', bot: 'bot-a', deadAt: now });
    await f.dead.prune([], ['bot-a'], now);
    for (const key of [
      f.ctx.keys.deadIndex,
      f.ctx.keys.deadByRoute('shop'),
      f.ctx.keys.deadByBot('bot-a'),
    ]) {
      expect(await f.redis.zrange(key, 0, -1)).toEqual([fresh]);
    }
    expect(old).toBeDefined();
  });

  it('prunes the indexes of routes and bots no longer configured', async () => {
    const now = Date.now();
    const old = await kill(1, {
      route: 'gone-route',
      bot: 'gone-bot',
      deadAt: now - DEAD_LETTER_RETENTION_MS - 1,
    });
    expect(old).toBeDefined();
    // A route that is not in the routes-ever-seen set any more either.
    await f.redis.srem(f.ctx.keys.routes, 'gone-route');
    await f.dead.prune(['shop'], ['bot-a'], now);
    expect(await f.redis.zcard(f.ctx.keys.deadByRoute('gone-route'))).toBe(0);
    expect(await f.redis.zcard(f.ctx.keys.deadByBot('gone-bot'))).toBe(0);
  });
});

describe('laneResolverFor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-resolver-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'relaygram.yaml');
  writeFileSync(
    path,
    `bots:
  - { id: bot-a, token_env: A_TOKEN, mode: polling }
  - { id: bot-b, token_env: B_TOKEN, mode: polling }
routes:
  - { name: by-chat, bots: [bot-a], target_url: "http://127.0.0.1:1/", ordering: chat }
  - { name: strict, target_url: "http://127.0.0.1:1/", ordering: strict }
  - { name: loose, target_url: "http://127.0.0.1:1/", ordering: none }
`,
  );
  const config = loadConfigOrThrow({
    path,
    env: {
      A_TOKEN: '123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      B_TOKEN: '654321:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
    },
  });
  const resolve = laneResolverFor(config);
  const letter = (route: string, bot = 'bot-a', update: Buffer = body(5, -100)) => ({
    deliveryId: 'd-1',
    route,
    bot,
    updateId: 5,
    update,
    reason: DeadReason.Rejected,
    attempts: 1,
    acceptedAt: 0,
    deadAt: 0,
  });

  it("places a re-send by the route's current ordering", () => {
    expect(resolve(letter('by-chat'))).toEqual({ lane: { kind: 'chat', chatId: -100 } });
    expect(resolve(letter('strict', 'bot-b'))).toEqual({ lane: { kind: 'shared' } });
    expect(resolve(letter('loose'))).toEqual({ lane: { kind: 'single', deliveryId: 'd-1' } });
  });

  it('refuses a removed route, a bot the route no longer takes, and a broken update', () => {
    expect(resolve(letter('gone'))).toEqual({ error: 'route gone is no longer configured' });
    expect(resolve(letter('by-chat', 'bot-b'))).toEqual({
      error: 'route by-chat no longer takes updates from bot bot-b',
    });
    expect(resolve(letter('strict', 'bot-a', Buffer.from('{')))).toEqual({
      error: 'the stored update is not JSON',
    });
  });

  it("sends an outbox send back to its bot and chat's lane while the bot is configured", () => {
    const call = (params: object) => Buffer.from(JSON.stringify({ method: 'sendMessage', params }));
    expect(resolve(letter(OUTBOX_ROUTE, 'bot-b', call({ chat_id: '@news' })))).toEqual({
      lane: { kind: 'chat', chatId: '@news' },
    });
    expect(resolve(letter(OUTBOX_ROUTE, 'gone-bot', call({ chat_id: 1 })))).toEqual({
      error: 'bot gone-bot is no longer configured',
    });
    expect(resolve(letter(OUTBOX_ROUTE, 'bot-a', call({ text: 'x' })))).toEqual({
      error: 'the stored send names no chat',
    });
  });
});
