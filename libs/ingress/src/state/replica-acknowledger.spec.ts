import {
  createRedis,
  replicaWaitFor,
  startRedisServer,
  waitForRedis,
  type RedisClient,
} from '@relaygram/queue';
import { eventually, replicatedRedis, type ReplicatedRedis } from '@relaygram/testing';
import type { Redis } from 'ioredis';
import {
  ReplicaAckError,
  ReplicaAcknowledger,
  type ReplicaWaitSettings,
} from './replica-acknowledger';

/** Calls of WAIT the primary has run, from INFO commandstats. */
async function waitCalls(redis: RedisClient): Promise<number> {
  const stats = await (redis as Redis).info('commandstats');
  return Number(/cmdstat_wait:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('ReplicaAcknowledger on a primary with a real replica', () => {
  let redis: ReplicatedRedis;
  let writer: RedisClient;
  let reader: Redis;
  const settings: { current: ReplicaWaitSettings } = {
    current: { replicas: 1, timeoutMs: 300 },
  };

  beforeAll(async () => {
    redis = await replicatedRedis(() => startRedisServer());
    writer = createRedis(redis.primary.url, { connectionName: 'test-replica-ack' });
    if (!(await waitForRedis(writer))) throw new Error('no Redis answers');
    reader = redis.onReplica;
  });

  afterAll(async () => {
    writer?.disconnect();
    await redis?.stop();
  });

  beforeEach(() => {
    settings.current = { replicas: 1, timeoutMs: 300 };
  });

  const acknowledger = () =>
    new ReplicaAcknowledger(replicaWaitFor(writer, 'ack'), () => settings.current);

  it('resolves once the replica holds what the connection wrote before', async () => {
    const ack = acknowledger();
    const since = ack.connection();
    await writer.set('ack:one', 'v1');
    await ack.replicated(since);
    // WAIT answered: the replica has applied the write, no polling needed.
    expect(await reader.get('ack:one')).toBe('v1');
  });

  it('answers many callers with a few WAITs: those who ask while one waits go together', async () => {
    const ack = acknowledger();
    const before = await waitCalls(writer);
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const since = ack.connection();
        await writer.set(`ack:many:${i}`, String(i));
        await ack.replicated(since);
        expect(await reader.get(`ack:many:${i}`)).toBe(String(i));
      }),
    );
    const calls = (await waitCalls(writer)) - before;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThan(50);
  });

  it('sends no WAIT when no replica is asked for', async () => {
    settings.current = { replicas: 0, timeoutMs: 300 };
    const ack = acknowledger();
    const before = await waitCalls(writer);
    await writer.set('ack:off', 'v');
    await ack.replicated(ack.connection());
    expect(await waitCalls(writer)).toBe(before);
    expect(ack.enabled).toBe(false);
  });

  it('rejects with how many confirmed when fewer replicas than asked exist', async () => {
    settings.current = { replicas: 2, timeoutMs: 100 };
    const ack = acknowledger();
    const since = ack.connection();
    await writer.set('ack:two', 'v');
    const error = await ack.replicated(since).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect(error).toMatchObject({ acknowledged: 1, wanted: 2, timeoutMs: 100 });
    expect((error as Error).message).toBe('1 of 2 Redis replicas acknowledged within 100 ms');
  });

  it('rejects every waiting caller after the timeout while the replica is frozen, and resolves again once it runs', async () => {
    const ack = acknowledger();
    const before = await waitCalls(writer);
    redis.freezeReplica();
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          const since = ack.connection();
          await writer.set(`ack:frozen:${i}`, 'v');
          return ack.replicated(since).then(
            () => 'resolved',
            (e: unknown) => e,
          );
        }),
      );
      for (const outcome of outcomes) {
        expect(outcome).toBeInstanceOf(ReplicaAckError);
        expect(outcome).toMatchObject({ acknowledged: 0, wanted: 1 });
      }
    } finally {
      redis.thawReplica();
    }
    // One group or two, each held for the timeout: never one wait per caller.
    expect((await waitCalls(writer)) - before).toBeLessThanOrEqual(2);
    const since = ack.connection();
    await writer.set('ack:thawed', 'v');
    await eventually(
      async () => {
        await ack.replicated(since);
        return true;
      },
      { timeoutMs: 10_000, retryErrors: true, what: 'the thawed replica confirming' },
    );
    expect(await reader.get('ack:thawed')).toBe('v');
  });

  it('refuses writes made on a connection that closed before the WAIT: a WAIT on a new one covers none of them', async () => {
    const ack = acknowledger();
    const since = ack.connection();
    expect(since).toBeDefined();
    await writer.set('ack:reconnected', 'v');
    // The connection that wrote is gone: a WAIT on the next one would answer at once.
    const reconnected = new Promise((resolve) => writer.once('ready', resolve));
    writer.disconnect(true);
    await reconnected;
    expect(ack.connection()).not.toBe(since);
    const error = await ack.replicated(since).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect((error as Error).message).toBe(
      'the Redis connection changed between the writes and their WAIT: replicas could not confirm them',
    );
    // Writes made on the new connection are confirmed as before.
    const now = ack.connection();
    await writer.set('ack:after-reconnect', 'v');
    await ack.replicated(now);
    expect(await reader.get('ack:after-reconnect')).toBe('v');
  });

  it('refuses a caller that had no connection when it wrote', async () => {
    const ack = acknowledger();
    const error = await ack.replicated(undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicaAckError);
  });
});
