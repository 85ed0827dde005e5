import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigOrThrow } from '@relaygram/config';
import { DeadReason } from '@relaygram/contracts';
import { laneResolverFor } from '../dead-letters/config-lane-resolver';
import { createRedis } from '../redis/redis-client';
import { redisUrl } from '@relaygram/testing';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { newDeliveryId } from '../lanes/update-enqueuer';
import { readBotStats, readRouteStats } from '../lanes/lane-stats';
import { parseAllowedUpdates, pullLaneId, type TakeRequest } from './pull-store';

const ROUTE = 'laptop';
const BOT = 'bot-a';
const DAY = 24 * 3600_000;

function message(updateId: number, chatId = 1): Buffer {
  return Buffer.from(
    `{"update_id":${updateId},"message":{"chat":{"id":${chatId}},"text":"#${updateId}"}}`,
  );
}

function ofType(updateId: number, type: string): Buffer {
  return Buffer.from(`{"update_id":${updateId},"${type}":{"id":"x${updateId}"}}`);
}

describe('PullStore', () => {
  let f: QueueFixture;
  beforeEach(async () => {
    f = await createQueueFixture('pull');
  });
  afterEach(() => f.cleanup());

  async function accept(updateId: number, body = message(updateId), acceptedAt?: number) {
    const deliveryId = newDeliveryId();
    await f.enqueuer.enqueue({
      bot: BOT,
      updateId,
      body,
      acceptedAt,
      deliveries: [{ route: ROUTE, lane: pullLaneId(ROUTE, BOT), deliveryId, pull: true }],
    });
    return deliveryId;
  }

  let calls = 0;
  async function take(overrides: Partial<TakeRequest> = {}) {
    const result = await f.pull.take({
      route: ROUTE,
      bot: BOT,
      token: `call-${++calls}`,
      mode: 'claim',
      limit: 100,
      waits: false,
      maxAgeMs: DAY,
      ...overrides,
    });
    if (result.kind !== 'ok') throw new Error(`expected updates, got ${result.kind}`);
    return { ...result, ids: result.updates.map((u) => JSON.parse(u.toString()).update_id) };
  }

  it('serves in acceptance order up to limit, again until confirmed, and confirms by offset', async () => {
    for (let id = 10; id < 15; id++) await accept(id);
    const first = await take({ limit: 3 });
    expect(first.ids).toEqual([10, 11, 12]);
    expect(first.updates[0].equals(message(10))).toBe(true);
    // Not confirmed: served again.
    expect((await take({ limit: 3 })).ids).toEqual([10, 11, 12]);
    const next = await take({ offset: 12, limit: 100 });
    expect(next.confirmed).toBe(2);
    expect(next.ids).toEqual([12, 13, 14]);
    const last = await take({ offset: 15 });
    expect(last).toMatchObject({ confirmed: 3, ids: [] });
    const route = await readRouteStats(f.ctx, ROUTE);
    expect(route).toMatchObject({ queued: 0, delivered: 5 });
    expect((await readBotStats(f.ctx, BOT)).queued).toBe(0);
    expect(await f.redis.sismember(f.ctx.keys.pullLanes(ROUTE), pullLaneId(ROUTE, BOT))).toBe(0);
  });

  it('confirms only what it served: updates accepted later with lower ids are never dropped unseen', async () => {
    await accept(900_000);
    expect((await take()).ids).toEqual([900_000]);
    // update_ids restarted at a random lower value after a quiet week.
    await accept(5_000);
    const after = await take({ offset: 900_001 });
    expect(after).toMatchObject({ confirmed: 1, ids: [5_000] });
  });

  it('an offset of N + 1 confirms the whole batch served up to update N, in acceptance order', async () => {
    // Accepted out of id order (a webhook delivering several chats at once).
    for (const id of [21, 20, 23, 22]) await accept(id, message(id, id));
    expect((await take()).ids).toEqual([21, 20, 23, 22]);
    // A framework confirms with the last update's id + 1.
    const next = await take({ offset: 23 });
    expect(next).toMatchObject({ confirmed: 4, ids: [] });
  });

  it('a negative offset forgets all but the last updates', async () => {
    for (let id = 1; id <= 5; id++) await accept(id);
    expect(await take({ offset: -2 })).toMatchObject({ confirmed: 3, ids: [4, 5] });
    expect((await readRouteStats(f.ctx, ROUTE)).queued).toBe(2);
  });

  it('remembers allowed_updates and leaves the other types out, counted as filtered', async () => {
    await accept(1, message(1));
    await accept(2, ofType(2, 'callback_query'));
    await accept(3, ofType(3, 'chat_member'));
    await accept(4, ofType(4, 'some_future_type'));
    await accept(5, message(5));
    const only = parseAllowedUpdates(['message', 'not_a_type']);
    expect(only?.shown).toEqual(['message']);
    expect((await take({ allowed: only, limit: 2 })).ids).toEqual([1, 4]);
    // Remembered: a call without allowed_updates keeps the selection.
    const again = await take();
    expect(again.ids).toEqual([1, 4, 5]);
    expect(again.filtered).toBe(0);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 3 });
    expect(await f.redis.hget(f.ctx.keys.routeStats(ROUTE), 'filtered')).toBe('2');
    expect((await f.pull.status([{ name: ROUTE, bots: [BOT] }]))[0]).toMatchObject({
      pending: 3,
      allowedUpdates: ['message'],
    });
    // [] is Telegram's default: everything but chat_member and the reactions.
    expect(parseAllowedUpdates([])).toEqual({
      excluded: ',chat_member,message_reaction,message_reaction_count,',
    });
    expect(parseAllowedUpdates('message')).toBeUndefined();
  });

  it('a new call takes the lane over: the waiting one learns it conflicts', async () => {
    const listener = createRedis(redisUrl(), { mode: 'blocking' });
    const notices: string[] = [];
    listener.on('message', (_channel: string, lane: string) => notices.push(lane));
    await listener.subscribe(f.ctx.keys.pullNotice(ROUTE));
    try {
      const waiting = await take({ token: 'old', waits: true });
      expect(waiting.ids).toEqual([]);
      await take({ token: 'new', waits: true });
      expect(
        await f.pull.take({
          route: ROUTE,
          bot: BOT,
          token: 'old',
          mode: 'check',
          limit: 100,
          waits: true,
          maxAgeMs: DAY,
        }),
      ).toEqual({ kind: 'conflict' });
      // The takeover was announced, so the old call's process woke up to learn it.
      for (let i = 0; i < 50 && notices.length === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(notices).toEqual([pullLaneId(ROUTE, BOT)]);
      // The newer call is still the poller and may look again.
      await accept(7);
      expect((await take({ token: 'new', mode: 'check', waits: true })).ids).toEqual([7]);
    } finally {
      await listener.quit();
    }
  });

  it('updates not confirmed within max_age go dead as expired, and a re-send puts them back for the client', async () => {
    const now = Date.now();
    const old = await accept(1, message(1), now - 2 * 3600_000);
    await accept(2, message(2), now);
    expect((await take({ maxAgeMs: 3600_000 })).ids).toEqual([2]);
    const letter = await f.dead.get(old);
    expect(letter).toMatchObject({ reason: DeadReason.Expired, route: ROUTE, bot: BOT });
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 1, deadTotal: 1, dead: 1 });

    const outcome = await f.dead.replay(old, () => ({ lane: { kind: 'shared' }, pull: true }));
    expect(outcome).toBe('queued');
    expect(await f.dead.get(old)).toBeUndefined();
    // Behind the update already waiting; never handed to a drain job.
    expect((await take({ maxAgeMs: 3600_000 })).ids).toEqual([2, 1]);
    expect(await f.redis.exists(f.ctx.keys.laneState(pullLaneId(ROUTE, BOT)))).toBe(0);
    expect(await f.redis.llen(f.ctx.keys.readyLanes(ROUTE))).toBe(0);
    expect((await readBotStats(f.ctx, BOT)).queued).toBe(2);
  });

  it('deleteWebhook with drop_pending_updates confirms everything pending', async () => {
    for (let id = 1; id <= 3; id++) await accept(id);
    expect(await f.pull.dropPending(ROUTE, BOT)).toBe(3);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 0, delivered: 3 });
    expect((await take()).ids).toEqual([]);
  });

  it('the sweep expires idle lanes, and kills the lanes of a route no gateway serves any more', async () => {
    const now = Date.now();
    await accept(1, message(1), now - 2 * DAY);
    await accept(2, message(2), now);
    const configured = [{ name: ROUTE, bots: [BOT], maxAgeMs: DAY }];
    expect(await f.pull.sweep(configured, { now })).toEqual({ expired: 1, routeRemoved: 0 });

    // The route leaves the config: its lanes wait out the grace, then go dead.
    expect(await f.pull.sweep([], { now: now + 60_000 })).toEqual({ expired: 0, routeRemoved: 0 });
    expect(await f.pull.sweep([], { now: now + 6 * 60_000 })).toEqual({
      expired: 0,
      routeRemoved: 1,
    });
    const letters = (await f.dead.list({ route: ROUTE })).items.map((l) => l.reason);
    expect(letters.sort()).toEqual([DeadReason.Expired, DeadReason.RouteRemoved]);
    expect(await f.redis.exists(f.ctx.keys.lane(pullLaneId(ROUTE, BOT)))).toBe(0);
    expect(await f.redis.exists(f.ctx.keys.pullState(pullLaneId(ROUTE, BOT)))).toBe(0);
    expect(await f.redis.hexists(f.ctx.keys.pullRoutes, ROUTE)).toBe(0);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 0, deadTotal: 2 });
    expect((await readBotStats(f.ctx, BOT)).queued).toBe(0);
  });
});

describe('laneResolverFor: pull routes', () => {
  it('sends a re-sent dead letter of a pull route back to its pull lane', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relaygram-pull-resolver-'));
    try {
      const path = join(dir, 'relaygram.yaml');
      writeFileSync(
        path,
        `bots:
  - { id: bot-a, token_env: A_TOKEN, mode: polling }
  - { id: bot-b, token_env: B_TOKEN, mode: polling }
routes:
  - { name: laptop, bots: [bot-a], pull: { client: dev } }
clients:
  - { name: dev, token_env: DEV_TOKEN, bots: [bot-a] }
`,
      );
      const resolve = laneResolverFor(
        loadConfigOrThrow({
          path,
          env: {
            A_TOKEN: '123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
            B_TOKEN: '654321:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
            DEV_TOKEN: 'dev-token-0123456789abcdef',
          },
        }),
      );
      const letter = (bot: string) => ({
        deliveryId: 'd-1',
        route: 'laptop',
        bot,
        updateId: 5,
        update: message(5),
        reason: DeadReason.Expired,
        attempts: 1,
        acceptedAt: 0,
        deadAt: 0,
      });
      expect(resolve(letter('bot-a'))).toEqual({ lane: { kind: 'shared' }, pull: true });
      expect(resolve(letter('bot-b'))).toEqual({
        error: 'route laptop no longer takes updates from bot bot-b',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
