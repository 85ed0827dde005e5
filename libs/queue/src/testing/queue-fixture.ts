import { randomUUID } from 'node:crypto';
import { createRedis, waitForRedis, type RelaygramRedis } from '../redis/redis-client';
import { queueContext, type QueueContext } from '../queue-context';
import { DrainScheduler } from '../lanes/drain-scheduler';
import { LaneStore } from '../lanes/lane-store';
import { UpdateEnqueuer } from '../lanes/update-enqueuer';
import { DeadLetterStore } from '../dead-letters/dead-letter-store';
import { LaneReconciler } from '../lanes/lane-reconciler';
import { PullStore } from '../pull/pull-store';
import { DrainJobDriver } from './drain-job-driver';

/** A store on the test Redis under a prefix of its own; `cleanup()` deletes every key of it. */
export interface QueueFixture {
  prefix: string;
  redis: RelaygramRedis;
  ctx: QueueContext;
  scheduler: DrainScheduler;
  enqueuer: UpdateEnqueuer;
  lanes: LaneStore;
  dead: DeadLetterStore;
  reconciler: LaneReconciler;
  pull: PullStore;
  /** Runs drain jobs by hand (no dispatcher). */
  driver: DrainJobDriver;
  cleanup(): Promise<void>;
}

export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url)
    throw new Error(
      'REDIS_URL is not set: run the tests through jest (its global setup finds a Redis)',
    );
  return url;
}

export async function deleteKeys(redis: RelaygramRedis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (found.length) await redis.del(...found);
  } while (cursor !== '0');
}

export async function createQueueFixture(name: string): Promise<QueueFixture> {
  const prefix = `t-${name}-${randomUUID().slice(0, 8)}`;
  const redis = createRedis(redisUrl(), { connectionName: `test-${name}` });
  if (!(await waitForRedis(redis))) throw new Error(`no Redis answers at ${redisUrl()}`);
  const ctx = queueContext(redis, prefix);
  const scheduler = new DrainScheduler(ctx);
  const lanes = new LaneStore(ctx);
  const driver = new DrainJobDriver(ctx, scheduler);
  return {
    prefix,
    redis,
    ctx,
    scheduler,
    enqueuer: new UpdateEnqueuer(ctx, scheduler),
    lanes,
    dead: new DeadLetterStore(ctx, scheduler),
    reconciler: new LaneReconciler(ctx, lanes, scheduler),
    pull: new PullStore(ctx),
    driver,
    async cleanup() {
      await driver.close();
      await scheduler.close();
      await deleteKeys(redis, `${prefix}:*`);
      await redis.quit();
    },
  };
}
