import { randomUUID } from 'node:crypto';
import { ConfigService, type RelaygramConfig, type RuntimeEnv } from '@relaygram/config';
import {
  createRedis,
  DrainScheduler,
  newDeliveryId,
  PullStore,
  pullLaneId,
  queueContext,
  UpdateEnqueuer,
  waitForRedis,
  type QueueContext,
} from '@relaygram/queue';
import { deleteKeys } from '@relaygram/testing';
import { BotStatusReader } from './bot-status-reader';
import { HealthRegistry } from './health-registry';

const HOOK = 'https://relay.example.com/webhooks/telegram/shop';

function configWith(bots: object[], pullRoutes: object[] = []): ConfigService {
  const config = { bots, routes: [], pullRoutes, clients: [], warnings: [], source: 'test' };
  return new ConfigService(config as unknown as RelaygramConfig, {} as RuntimeEnv, 'dispatcher');
}

describe('BotStatusReader', () => {
  let ctx: QueueContext;
  const prefix = `t-bot-status-${randomUUID().slice(0, 8)}`;
  const bots = [
    { id: 'sol', mode: 'polling' },
    { id: 'shop', mode: 'webhook', webhook: { url: HOOK, manage: true } },
  ];

  beforeAll(async () => {
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    if (!(await waitForRedis(redis))) throw new Error('no Redis at REDIS_URL');
    ctx = queueContext(redis, prefix);
  });

  afterAll(async () => {
    await deleteKeys(ctx.redis, `${prefix}:*`);
    await ctx.redis.quit();
  });

  it('lists every configured bot, healthy and unknown when nobody reported on it', async () => {
    const reader = new BotStatusReader(new HealthRegistry(), configWith(bots), ctx);
    expect(await reader.read({ redis: true })).toEqual([
      {
        id: 'sol',
        mode: 'polling',
        polling: false,
        healthy: true,
        queue: 0,
        dead: 0,
        state: 'unknown',
      },
      {
        id: 'shop',
        mode: 'webhook',
        polling: false,
        healthy: true,
        queue: 0,
        dead: 0,
        state: 'unknown',
        webhook: { expected_url: HOOK },
      },
    ]);
  });

  it("reads ingress's state from Redis in a process without ingress, with the queue counts", async () => {
    const { redis, keys } = ctx;
    await redis.hset(keys.botState('sol'), {
      poller_state: 'conflict',
      poller_problem: '409 from another poller',
    });
    await redis.set(keys.pollerLease('sol'), 'replica-1', 'PX', 60_000);
    await redis.hset(keys.botState('shop'), {
      webhook_info: JSON.stringify({ url: 'https://old.example.com/x', pending_update_count: 2 }),
    });
    await redis.hset(keys.botStats('sol'), 'queued', 4);
    const reader = new BotStatusReader(new HealthRegistry(), configWith(bots), ctx);
    const [sol, shop] = await reader.read({ redis: true });
    expect(sol).toMatchObject({
      polling: true,
      healthy: false,
      state: 'conflict',
      problem: '409 from another poller',
      queue: 4,
    });
    expect(shop).toMatchObject({
      healthy: false,
      webhook: { expected_url: HOOK, url: 'https://old.example.com/x', pending_update_count: 2 },
      problem: expect.stringContaining('old.example.com'),
    });
  });

  it('prefers the in-process ingress and merges the other features', async () => {
    const registry = new HealthRegistry();
    registry.addBotHealthSource('ingress', () => [
      { id: 'sol', mode: 'polling', polling: true, healthy: true, state: 'polling' },
    ]);
    registry.addBotHealthSource('gateway', () => [
      {
        id: 'sol',
        mode: 'polling',
        polling: false,
        healthy: false,
        problem: 'getMe: 401',
        clients: 1,
      },
      { id: 'gone', mode: 'polling', polling: false, healthy: false },
    ]);
    const reader = new BotStatusReader(registry, configWith(bots), ctx);
    const statuses = await reader.read({ redis: true });
    expect(statuses.map((s) => s.id)).toEqual(['sol', 'shop']);
    expect(statuses[0]).toMatchObject({
      polling: true,
      healthy: false,
      state: 'polling',
      problem: 'getMe: 401',
      clients: 1,
    });
    expect(statuses[1]).toMatchObject({ state: 'unknown', healthy: true });
  });

  it('gives null counts when Redis is not to be asked', async () => {
    const reader = new BotStatusReader(new HealthRegistry(), configWith(bots), ctx);
    const [sol] = await reader.read({ redis: false });
    expect(sol).toMatchObject({ queue: null, dead: null, state: 'unknown' });
  });

  it("shows each pull route's pending count and last poll; a stale one makes its bot unhealthy", async () => {
    const routes = [
      { name: 'support', bots: ['sol'], pull: { client: 'support-bot' }, maxAgeMs: 3600_000 },
      { name: 'laptop', bots: ['sol'], pull: { client: 'dev' }, maxAgeMs: 3600_000 },
    ];
    // The poller state an earlier test wrote would add its own problem.
    await ctx.redis.del(
      ctx.keys.botState('sol'),
      ctx.keys.botState('shop'),
      ctx.keys.pollerLease('sol'),
    );
    const scheduler = new DrainScheduler(ctx);
    try {
      const enqueuer = new UpdateEnqueuer(ctx, scheduler);
      for (const [updateId, route] of [
        [1, 'support'],
        [2, 'support'],
        [3, 'laptop'],
      ] as const) {
        await enqueuer.enqueue({
          bot: 'sol',
          updateId,
          body: Buffer.from(`{"update_id":${updateId},"message":{"chat":{"id":1}}}`),
          deliveries: [
            { route, lane: pullLaneId(route, 'sol'), deliveryId: newDeliveryId(), pull: true },
          ],
        });
      }
      const polledAt = Date.now() - 6 * 60_000;
      await new PullStore(ctx).take({
        route: 'support',
        bot: 'sol',
        token: 'call-1',
        mode: 'claim',
        limit: 1,
        waits: false,
        maxAgeMs: 3600_000,
        now: polledAt,
      });
      await new PullStore(ctx).take({
        route: 'laptop',
        bot: 'sol',
        token: 'call-2',
        mode: 'claim',
        limit: 1,
        waits: false,
        maxAgeMs: 3600_000,
      });
      const reader = new BotStatusReader(new HealthRegistry(), configWith(bots, routes), ctx);
      const [sol, shop] = await reader.read({ redis: true });
      expect(sol).toMatchObject({
        healthy: false,
        problem:
          'pull route support: client support-bot has not polled for 5 minutes while 2 updates wait',
        pull_routes: [
          {
            route: 'support',
            client: 'support-bot',
            pending: 2,
            last_polled_at: new Date(polledAt).toISOString(),
            stale: true,
          },
          { route: 'laptop', client: 'dev', pending: 1, stale: false },
        ],
      });
      expect(shop).not.toHaveProperty('pull_routes');
      expect(shop?.healthy).toBe(true);
    } finally {
      await scheduler.close();
    }
  });
});
