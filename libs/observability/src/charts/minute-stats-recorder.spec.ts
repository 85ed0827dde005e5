import { randomUUID } from 'node:crypto';
import { ConfigService, type RelaygramConfig, type RuntimeEnv } from '@relaygram/config';
import {
  createRedis,
  queueContext,
  waitForRedis,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import { deleteKeys, redisUrl } from '@relaygram/testing';
import pino from 'pino';
import { minuteOf, MINUTE_BUCKET_TTL_S, latencyField } from './minute-buckets';
import { MinuteStatsReader } from './minute-stats-reader';
import { MinuteStatsRecorder } from './minute-stats-recorder';

function configWith(routes: object[], bots: object[]): ConfigService {
  const config = { bots, routes, pullRoutes: [], clients: [], warnings: [], source: 'test' };
  return new ConfigService(config as unknown as RelaygramConfig, {} as RuntimeEnv, 'standalone');
}

/** The process logger's warn and info lines, as objects. */
function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) },
  );
  return { logger, lines };
}

describe('MinuteStatsRecorder and MinuteStatsReader (real Redis)', () => {
  const prefix = `t-minutes-${randomUUID().slice(0, 8)}`;
  let redis: RelaygramRedis;
  let ctx: QueueContext;

  beforeAll(async () => {
    redis = createRedis(redisUrl(), { connectionName: 'test-minutes' });
    expect(await waitForRedis(redis)).toBe(true);
    ctx = queueContext(redis, prefix);
  });
  afterAll(async () => {
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  it('adds the counts to one hash a minute with an expiry, and reads them back as buckets', async () => {
    const { logger } = recordingLogger();
    const recorder = new MinuteStatsRecorder(configWith([], []), ctx, logger);
    const now = Date.now();
    const earlier = now - 120_000;
    recorder.count('route', 'site', 'accepted', 1, now);
    recorder.count('route', 'site', 'accepted', 2, now);
    recorder.count('route', 'site', 'delivered', 1, now);
    recorder.latency('route', 'site', 0.02, now);
    recorder.count('route', 'site', 'dead', 1, earlier);
    recorder.count('bot', 'sol', 'accepted', 1, now);
    await recorder.flush();
    // A second flush adds to what the first wrote.
    recorder.count('route', 'site', 'delivered', 1, now);
    await recorder.flush();

    const key = ctx.keys.minuteStats('route', 'site', minuteOf(now));
    expect(await redis.hgetall(key)).toEqual({
      accepted: '3',
      delivered: '2',
      [latencyField(0.02)]: '1',
    });
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(MINUTE_BUCKET_TTL_S - 10);
    expect(ttl).toBeLessThanOrEqual(MINUTE_BUCKET_TTL_S);

    const { buckets } = await new MinuteStatsReader(ctx).read('route', 'site', now);
    expect(buckets).toHaveLength(60);
    expect(buckets[59]).toMatchObject({ accepted: 3, delivered: 2, dead: 0, failed: 0 });
    expect(buckets[59].p50_ms).toBeGreaterThan(10);
    expect(buckets[59].p50_ms).toBeLessThanOrEqual(25);
    expect(buckets[57]).toMatchObject({ dead: 1, accepted: 0, p50_ms: null, queue: null });
  });

  it('samples queue depths once a period, by the process holding the lease', async () => {
    const config = configWith([{ name: 'depth-route' }], [{ id: 'depth-bot' }]);
    const a = new MinuteStatsRecorder(config, ctx, recordingLogger().logger);
    const b = new MinuteStatsRecorder(config, ctx, recordingLogger().logger);
    await redis.hset(ctx.keys.routeStats('depth-route'), 'queued', 7);
    await redis.hset(ctx.keys.botStats('depth-bot'), 'queued', 4);
    await a.flush();
    await redis.hset(ctx.keys.routeStats('depth-route'), 'queued', 9);
    await b.flush(); // the lease is a's for this period: b samples nothing
    const now = Date.now();
    const reader = new MinuteStatsReader(ctx);
    expect((await reader.read('route', 'depth-route', now)).buckets[59].queue).toBe(7);
    expect((await reader.read('bot', 'depth-bot', now)).buckets[59].queue).toBe(4);
  });

  it('keeps the counts of a failed flush for the next one, and says so once per outage', async () => {
    const { logger, lines } = recordingLogger();
    // A client whose connection is closed: every command fails at once, as in an outage.
    const away = createRedis(redisUrl(), { connectionName: 'test-minutes-away' });
    expect(await waitForRedis(away)).toBe(true);
    await away.quit();
    const switchable: { -readonly [K in keyof QueueContext]: QueueContext[K] } = {
      ...ctx,
      redis: away,
    };
    const recorder = new MinuteStatsRecorder(configWith([], []), switchable, logger);
    const now = Date.now();
    recorder.count('route', 'outage', 'failed', 2, now);
    await recorder.flush();
    recorder.count('route', 'outage', 'failed', 1, now);
    await recorder.flush();
    expect(lines.filter((line) => /not written/.test(line.msg))).toHaveLength(1);

    switchable.redis = redis;
    await recorder.flush();
    expect(lines.filter((line) => /written to Redis again/.test(line.msg))).toHaveLength(1);
    const key = ctx.keys.minuteStats('route', 'outage', minuteOf(now));
    expect(await redis.hget(key, 'failed')).toBe('3');
  });
});
