import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeadReason, laneId, type LaneKey } from '@relaygram/contracts';
import {
  decodeEntry,
  newDeliveryId,
  type DeadLetterStore,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import {
  createQueueFixture,
  type DrainJobDriver,
  type QueueFixture,
} from '@relaygram/queue/testing';
import { redisUrl, runRelaygramCliSync, uniquePrefix, type CliRun } from '@relaygram/testing';

describe('relaygram dead', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-dead-'));
  const configPath = join(dir, 'relaygram.yaml');
  const prefix = uniquePrefix('cli-dead');
  const env = {
    BOT_TOKEN: `${randomInt(100_000, 9_999_999)}:${randomBytes(27).toString('base64url')}`,
    REDIS_URL: redisUrl(),
  };
  let store: QueueFixture;
  let redis: RelaygramRedis;
  let ctx: QueueContext;
  let driver: DrainJobDriver;
  let dead: DeadLetterStore;
  let nextUpdate = 1;

  const relaygram = (args: string[], extraEnv: Record<string, string> = {}): CliRun =>
    runRelaygramCliSync(['dead', ...args, '--config', configPath], { ...env, ...extraEnv });

  /** An update of `chat` on `route` that went dead with `reason`, at `deadAt`. */
  async function killed(route: string, chat: number, reason: DeadReason, deadAt: number) {
    const key: LaneKey = route === 'site' ? { kind: 'shared' } : { kind: 'chat', chatId: chat };
    const lane = laneId(route, 'bot', key);
    const deliveryId = newDeliveryId();
    const updateId = nextUpdate++;
    const enqueued = await store.enqueuer.enqueue({
      bot: 'bot',
      updateId,
      body: Buffer.from(JSON.stringify({ update_id: updateId, message: { chat: { id: chat } } })),
      deliveries: [{ route, lane, deliveryId }],
    });
    await enqueued.jobsAdded;
    await driver.finishOne(
      route,
      () => ({
        kind: 'dead',
        dead: { reason, attempts: 2, lastStatus: 400, lastBody: 'bad' },
      }),
      deadAt,
    );
    return { deliveryId, updateId, lane };
  }

  beforeAll(async () => {
    writeFileSync(
      configPath,
      `redis:
  url: redis://127.0.0.1:1
  prefix: ${prefix}
bots:
  - { id: bot, token_env: BOT_TOKEN, mode: polling }
routes:
  - { name: shop, target_url: "http://127.0.0.1:9/shop" }
  - { name: site, target_url: "http://127.0.0.1:9/site", ordering: strict }
`,
    );
    store = await createQueueFixture('cli-dead', prefix);
    ({ redis, ctx, driver, dead } = store);
  });

  afterAll(async () => {
    await store.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists, filters and pages dead letters', async () => {
    const a = await killed('shop', 1, DeadReason.Rejected, 1_000);
    const b = await killed('shop', 2, DeadReason.Poison, 2_000);
    const c = await killed('site', 3, DeadReason.Expired, 3_000);

    const all = relaygram(['list']);
    expect(all.status).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^DELIVERY ID\s+ROUTE\s+BOT\s+UPDATE\s+REASON\s+ATTEMPTS\s+STATUS\s+DIED AT$/,
    );
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([
      c.deliveryId,
      b.deliveryId,
      a.deliveryId,
    ]);
    expect(lines[1]).toContain('1970-01-01T00:00:03.000Z');

    const poison = relaygram(['list', '--route', 'shop', '--reason', 'poison', '--json']);
    expect(poison.status).toBe(0);
    const body = JSON.parse(poison.stdout) as {
      items: Record<string, unknown>[];
      next_cursor: null;
    };
    expect(body.next_cursor).toBeNull();
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      delivery_id: b.deliveryId,
      route: 'shop',
      bot: 'bot',
      update_id: b.updateId,
      update_type: 'message',
      reason: 'poison',
      attempts: 2,
      last_status: 400,
      last_body: 'bad',
      update: { update_id: b.updateId, message: { chat: { id: 2 } } },
    });

    const first = relaygram(['list', '--limit', '2']);
    const cursor = /more: add --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();
    const second = relaygram(['list', '--limit', '2', '--cursor', cursor!]);
    expect(second.stdout).toContain(a.deliveryId);
    expect(second.stdout).not.toContain('more:');

    expect(relaygram(['list', '--reason', 'bogus']).status).toBe(1);
    for (const letter of [a, b, c]) await dead.delete(letter.deliveryId);
    expect(relaygram(['list']).stdout).toBe('no dead letters\n');
  }, 120_000);

  it("re-sends one letter, or all of a route, to their lanes under the route's current ordering", async () => {
    const one = await killed('shop', 7, DeadReason.Rejected, 10_000);
    const site = [
      await killed('site', 8, DeadReason.Poison, 11_000),
      await killed('site', 9, DeadReason.Poison, 12_000),
    ];

    const single = relaygram(['replay', one.deliveryId]);
    expect(single).toMatchObject({ status: 0, stdout: `queued ${one.deliveryId}\n` });
    expect(await dead.get(one.deliveryId)).toBeUndefined();
    const [entry] = (await redis.lrangeBuffer(ctx.keys.lane(one.lane), 0, -1)).map(decodeEntry);
    expect(entry).toMatchObject({ deliveryId: one.deliveryId, updateId: one.updateId });

    const all = relaygram(['replay', '--route', 'site']);
    expect(all).toMatchObject({ status: 0, stdout: 're-sent 2, not re-sent 0\n' });
    const queued = (await redis.lrangeBuffer(ctx.keys.lane(site[0].lane), 0, -1)).map(decodeEntry);
    expect(queued.map((e) => e.deliveryId)).toEqual(site.map((s) => s.deliveryId));

    const missing = relaygram(['replay', 'no-such-id']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('not re-sent no-such-id: no such dead letter\n');
    expect(relaygram(['replay']).status).toBe(1);
    // No dispatcher drains them here: deliver them by hand for the next test.
    await driver.finishOne('shop', () => ({ kind: 'delivered' }));
    for (let i = 0; i < site.length; i++)
      await driver.finishOne('site', () => ({ kind: 'delivered' }));
    expect(await redis.exists(ctx.keys.lane(one.lane), ctx.keys.lane(site[0].lane))).toBe(0);
  }, 120_000);

  it('deletes letters by id or by filter', async () => {
    const x = await killed('shop', 20, DeadReason.Rejected, 20_000);
    const y = await killed('shop', 21, DeadReason.Rejected, 21_000);
    const z = await killed('site', 22, DeadReason.Expired, 22_000);

    expect(relaygram(['delete', x.deliveryId])).toMatchObject({
      status: 0,
      stdout: `deleted ${x.deliveryId}\n`,
    });
    expect(await dead.get(x.deliveryId)).toBeUndefined();
    expect(relaygram(['delete', x.deliveryId]).status).toBe(1);

    const refused = relaygram(['delete']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/--route, --bot, --reason or --all/);

    expect(relaygram(['delete', '--reason', 'rejected'])).toMatchObject({
      status: 0,
      stdout: 'deleted 1\n',
    });
    expect(await dead.get(y.deliveryId)).toBeUndefined();
    expect(await dead.get(z.deliveryId)).toBeDefined();
    expect(relaygram(['delete', '--all']).stdout).toBe('deleted 1\n');
    expect(await dead.get(z.deliveryId)).toBeUndefined();
  }, 120_000);

  it('says when Redis cannot be reached, without printing its password', () => {
    // REDIS_URL overrides the file's redis.url, as in every Relaygram process.
    const run = relaygram(['list'], { REDIS_URL: 'redis://:hunter2@127.0.0.1:1' });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('relaygram dead: cannot reach Redis at 127.0.0.1:1\n');
  }, 60_000);
});
