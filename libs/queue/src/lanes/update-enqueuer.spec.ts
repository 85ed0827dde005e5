import type { Redis } from 'ioredis';
import { DEDUP_BLOCK_BITS, laneId } from '@relaygram/contracts';
import { keysMatching } from '@relaygram/testing';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { decodeEntry } from './delivery-entry';
import { UpdateEnqueuer, newDeliveryId, type DeliveryTarget } from './update-enqueuer';
import { readBotStats, readRouteStats } from './lane-stats';

const body = (updateId: number, chatId = 42) =>
  Buffer.from(
    JSON.stringify({
      update_id: updateId,
      message: { message_id: 1, chat: { id: chatId, type: 'private' }, text: 'hi' },
    }),
  );

function target(route: string, chatId = 42): DeliveryTarget {
  return {
    route,
    lane: laneId(route, 'bot-a', { kind: 'chat', chatId }),
    deliveryId: newDeliveryId(),
  };
}

describe('UpdateEnqueuer', () => {
  let f: QueueFixture;

  beforeEach(async () => {
    f = await createQueueFixture('enqueue');
  });
  afterEach(() => f.cleanup());

  it('appends one delivery per route to its lane and schedules idle lanes once', async () => {
    const a = target('shop');
    const b = target('site');
    const result = await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 100,
      body: body(100),
      deliveries: [a, b],
    });
    expect(result).toMatchObject({ status: 'queued', deliveries: 2 });
    await result.jobsAdded;

    const raw = await f.redis.lrangeBuffer(f.ctx.keys.lane(a.lane), 0, -1);
    expect(raw).toHaveLength(1);
    const entry = decodeEntry(raw[0]);
    expect(entry).toMatchObject({
      deliveryId: a.deliveryId,
      updateId: 100,
      bot: 'bot-a',
      route: 'shop',
    });
    expect(entry.body.equals(body(100))).toBe(true);

    const gen = await f.lanes.generation(a.lane);
    expect(gen).toBeDefined();
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([a.lane]);
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('site'), 0, -1)).toEqual([b.lane]);
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(await f.scheduler.queue('site').getJobCounts('waiting')).toEqual({ waiting: 1 });

    // A second update to the same lane rides on the lane as it is: no new job.
    const again = { ...target('shop'), lane: a.lane };
    await (
      await f.enqueuer.enqueue({
        bot: 'bot-a',
        updateId: 101,
        body: body(101),
        deliveries: [again],
      })
    ).jobsAdded;
    expect(await f.lanes.generation(a.lane)).toBe(gen);
    expect(await f.redis.llen(f.ctx.keys.readyLanes('shop'))).toBe(1);
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 1 });
    // Another lane of the route waits too, and more lanes wait than jobs are pending: one more job.
    await (
      await f.enqueuer.enqueue({
        bot: 'bot-a',
        updateId: 102,
        body: body(102, 43),
        deliveries: [target('shop', 43)],
      })
    ).jobsAdded;
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 2 });
    expect(await f.lanes.length(a.lane)).toBe(2);
    expect(await readBotStats(f.ctx, 'bot-a')).toEqual({ queued: 4, dead: 0 });
    expect((await readRouteStats(f.ctx, 'shop')).queued).toBe(3);
  });

  it('arms no more jobs than the route has slots on its live dispatchers', async () => {
    await f.lanes.heartbeat('d1', 10_000, [{ route: 'shop', slots: 2 }]);
    for (let chat = 0; chat < 5; chat++) {
      await (
        await f.enqueuer.enqueue({
          bot: 'bot-a',
          updateId: 200 + chat,
          body: body(200 + chat, chat),
          deliveries: [target('shop', chat)],
        })
      ).jobsAdded;
    }
    expect(await f.redis.llen(f.ctx.keys.readyLanes('shop'))).toBe(5);
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 2 });
    // A second live dispatcher doubles the slots.
    await f.lanes.heartbeat('d2', 10_000, [{ route: 'shop', slots: 2 }]);
    await (
      await f.enqueuer.enqueue({
        bot: 'bot-a',
        updateId: 300,
        body: body(300, 9),
        deliveries: [target('shop', 9)],
      })
    ).jobsAdded;
    expect(await f.scheduler.queue('shop').getJobCounts('waiting')).toEqual({ waiting: 4 });
  });

  it('keeps a pull route delivery in its lane for the client, never scheduled, and tells the waiting calls', async () => {
    const notices: string[] = [];
    const subscriber = (f.redis as Redis).duplicate({ enableOfflineQueue: true });
    subscriber.on('message', (_channel: string, lane: string) => notices.push(lane));
    await subscriber.subscribe(f.ctx.keys.pullNotice('mirror'));
    const pull = {
      route: 'mirror',
      lane: laneId('mirror', 'bot-a', { kind: 'shared' }),
      deliveryId: newDeliveryId(),
      pull: true,
    };
    const push = target('shop');
    const result = await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 500,
      body: body(500),
      deliveries: [pull, push],
    });
    await result.jobsAdded;
    expect(result).toMatchObject({ status: 'queued', deliveries: 2 });
    expect(await f.lanes.length(pull.lane)).toBe(1);
    expect(await f.redis.exists(f.ctx.keys.laneState(pull.lane))).toBe(0);
    expect(await f.redis.smembers(f.ctx.keys.pullLanes('mirror'))).toEqual([pull.lane]);
    expect(
      await f.redis.exists(f.ctx.keys.routeLanes('mirror'), f.ctx.keys.readyLanes('mirror')),
    ).toBe(0);
    expect(await f.scheduler.queue('mirror').getJobCounts('waiting')).toEqual({ waiting: 0 });
    // The push route beside it is scheduled as usual.
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([push.lane]);
    await subscriber.ping();
    expect(notices).toEqual([pull.lane]);
    expect((await readRouteStats(f.ctx, 'mirror')).queued).toBe(1);
    await subscriber.quit();
  });

  it('answers duplicate for an update_id seen before and writes nothing', async () => {
    await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 7,
      body: body(7),
      deliveries: [target('shop')],
    });
    const other = target('shop', 99);
    const result = await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 7,
      body: body(7),
      deliveries: [other],
    });
    expect(result).toMatchObject({ status: 'duplicate', deliveries: 0 });
    expect(await f.lanes.length(other.lane)).toBe(0);
    // Dedup is per bot: the same id from another bot is new.
    const fromB = {
      ...target('shop'),
      lane: laneId('shop', 'bot-b', { kind: 'chat', chatId: 42 }),
    };
    expect(
      (await f.enqueuer.enqueue({ bot: 'bot-b', updateId: 7, body: body(7), deliveries: [fromB] }))
        .status,
    ).toBe('queued');
  });

  it('marks an update with no matching route as seen and answers ignored', async () => {
    expect(
      await f.enqueuer.enqueue({ bot: 'bot-a', updateId: 5, body: body(5), deliveries: [] }),
    ).toMatchObject({
      status: 'ignored',
      deliveries: 0,
    });
    expect(
      (await f.enqueuer.enqueue({ bot: 'bot-a', updateId: 5, body: body(5), deliveries: [] }))
        .status,
    ).toBe('duplicate');
  });

  it('enqueues exactly once under 50 concurrent copies of one update', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        f.enqueuer.enqueue({
          bot: 'bot-a',
          updateId: 900,
          body: body(900),
          deliveries: [target('shop'), target('site')],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'queued')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'duplicate')).toHaveLength(49);
    expect(await f.lanes.length(laneId('shop', 'bot-a', { kind: 'chat', chatId: 42 }))).toBe(1);
    expect(await f.lanes.length(laneId('site', 'bot-a', { kind: 'chat', chatId: 42 }))).toBe(1);
  });

  it('leaves neither the dedup mark nor any lane entry when the script fails, and a retry then enqueues', async () => {
    const good = target('shop', 1);
    const bad = target('site', 2);
    // A foreign key of the wrong type where the second lane lives: the script must fail
    // before its first write rather than half-way through.
    await f.redis.set(f.ctx.keys.lane(bad.lane), 'not a list');
    await expect(
      f.enqueuer.enqueue({ bot: 'bot-a', updateId: 300, body: body(300), deliveries: [good, bad] }),
    ).rejects.toThrow(/WRONGTYPE/);
    expect(await f.redis.getbit(f.ctx.keys.dedup('bot-a', 0), 300)).toBe(0);
    expect(await f.redis.exists(f.ctx.keys.lane(good.lane), f.ctx.keys.laneState(good.lane))).toBe(
      0,
    );
    expect(await f.redis.hget(f.ctx.keys.routeStats('shop'), 'queued')).toBeNull();

    await f.redis.del(f.ctx.keys.lane(bad.lane));
    const retried = await f.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 300,
      body: body(300),
      deliveries: [good, bad],
    });
    expect(retried).toMatchObject({ status: 'queued', deliveries: 2 });
  });

  it('accepts the update when a lane cannot be scheduled, reports it, and leaves it for the reconciler', async () => {
    const failures: unknown[] = [];
    const enqueuer = new UpdateEnqueuer(f.ctx, f.scheduler, (error) => failures.push(error));
    const good = target('shop', 1);
    // The route's ready list holds another type: scheduling fails after the acceptance.
    await f.redis.set(f.ctx.keys.readyLanes('shop'), 'not a list');
    const result = await enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 400,
      body: body(400),
      deliveries: [good],
    });
    expect(result).toMatchObject({ status: 'queued', deliveries: 1 });
    expect(String(failures[0])).toContain(good.lane);
    expect(await f.redis.getbit(f.ctx.keys.dedup('bot-a', 0), 400)).toBe(1);
    expect(await f.lanes.length(good.lane)).toBe(1);
    expect(await f.redis.sismember(f.ctx.keys.routeLanes('shop'), good.lane)).toBe(1);

    // Once the key is fixed, the reconciler schedules the lane.
    await f.redis.del(f.ctx.keys.readyLanes('shop'));
    const report = await f.reconciler.reconcile(['shop']);
    expect(report.restarted).toBeGreaterThanOrEqual(1);
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([good.lane]);
  });

  it('keeps dedup state compact: one bitmap per block of update_ids, with a TTL', async () => {
    const start = 5 * DEDUP_BLOCK_BITS + 10;
    for (let i = 0; i < 2000; i++) {
      await f.enqueuer.enqueue({
        bot: 'bot-a',
        updateId: start + i,
        body: body(start + i),
        deliveries: [],
      });
    }
    const dedupKeys = await keysMatching(f.redis, `${f.prefix}:dedup:*`);
    expect(dedupKeys).toEqual([f.ctx.keys.dedup('bot-a', 5)]);
    const bytes = Number(await f.redis.call('MEMORY', 'USAGE', dedupKeys[0]));
    expect(bytes / 2000).toBeLessThan(8);
    const ttl = await f.redis.ttl(dedupKeys[0]);
    expect(ttl).toBeGreaterThan(23 * 3600);
  });

  it('refuses an update_id that is not a non-negative safe integer', async () => {
    for (const updateId of [-1, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN]) {
      await expect(
        f.enqueuer.enqueue({ bot: 'bot-a', updateId, body: body(1), deliveries: [] }),
      ).rejects.toThrow(RangeError);
    }
  });
});
