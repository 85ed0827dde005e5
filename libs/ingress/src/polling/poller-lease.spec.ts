import { randomUUID } from 'node:crypto';
import { RedisKeys } from '@relaygram/contracts';
import { createRedis, waitForRedis } from '@relaygram/queue';
import { deleteKeys, redisUrl } from '@relaygram/testing';
import { withIngressScripts, type IngressRedis } from '../state/ingress-scripts';
import { PollerLease } from './poller-lease';

describe('PollerLease', () => {
  const prefix = `t-lease-${randomUUID().slice(0, 8)}`;
  const keys = new RedisKeys(prefix);
  let redis: IngressRedis;

  beforeAll(async () => {
    redis = withIngressScripts(createRedis(redisUrl(), { connectionName: 'test-lease' }));
    expect(await waitForRedis(redis)).toBe(true);
  });
  afterAll(async () => {
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  let n = 0;
  const pair = (ttlMs = 200) => {
    const bot = `bot-${++n}`;
    return [
      new PollerLease({ redis, keys }, bot, ttlMs),
      new PollerLease({ redis, keys }, bot, ttlMs),
    ];
  };

  it('is held by one replica at a time, and taken again by its holder', async () => {
    const [a, b] = pair(5_000);
    expect(a.token).not.toBe(b.token);
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    expect(await a.acquire()).toBe(true);
    expect(await a.renew()).toBe(true);
    expect(await b.renew()).toBe(false);
    expect(await redis.get(keys.pollerLease(a.bot))).toBe(a.token);
  });

  it('passes to a standby when the holder releases it, or when it expires unrenewed', async () => {
    const [a, b] = pair(200);
    expect(await a.acquire()).toBe(true);
    expect(await b.release()).toBe(false);
    expect(await a.release('stopped')).toBe(true);
    expect(await redis.hget(keys.botState(a.bot), 'poller_state')).toBe('stopped');
    expect(await b.acquire()).toBe(true);
    // b dies without releasing: after the TTL, a takes over, and b's renewals fail.
    expect(await a.acquire()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await a.acquire()).toBe(true);
    expect(await b.renew()).toBe(false);
  });

  it('saves the offset and publishes state only while holding the lease', async () => {
    const [a, b] = pair(5_000);
    expect(await a.readOffset()).toBeUndefined();
    expect(await a.acquire()).toBe(true);
    expect(await a.saveOffset(1001)).toBe(true);
    expect(await a.publish('backoff', 'cannot reach Telegram', 5)).toBe(true);
    // A replica that lost (or never had) the lease cannot move the offset or the state.
    expect(await b.saveOffset(7)).toBe(false);
    expect(await b.publish('polling', undefined, 6)).toBe(false);
    expect(await b.readOffset()).toBe(1001);
    expect(await redis.hgetall(keys.botState(a.bot))).toEqual({
      poller_state: 'backoff',
      poller_problem: 'cannot reach Telegram',
      poller_since: '5',
    });
    expect(await a.publish('polling', undefined, 8)).toBe(true);
    expect(await redis.hget(keys.botState(a.bot), 'poller_problem')).toBeNull();
  });

  it('extends the lease when it saves an offset', async () => {
    const [a] = pair(300);
    expect(await a.acquire()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await a.saveOffset(5)).toBe(true);
    expect(await redis.pttl(keys.pollerLease(a.bot))).toBeGreaterThan(200);
  });
});
