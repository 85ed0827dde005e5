import { deleteKeys, redisUrl, uniquePrefix } from '@relaygram/testing';
import { createRedis, waitForRedis, type RelaygramRedis } from '../redis/redis-client';
import { queueContext, type QueueContext } from '../queue-context';
import { DrainScheduler } from '../lanes/drain-scheduler';
import { LaneStore } from '../lanes/lane-store';
import { UpdateEnqueuer } from '../lanes/update-enqueuer';
import { DeadLetterStore } from '../dead-letters/dead-letter-store';
import { LaneReconciler } from '../lanes/lane-reconciler';
import { PullStore } from '../pull/pull-store';
import { OutboxStore } from '../outbox/outbox-store';
import { BroadcastStore } from '../broadcast/broadcast-store';
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
  outbox: OutboxStore;
  broadcasts: BroadcastStore;
  /** Runs drain jobs by hand (no dispatcher). */
  driver: DrainJobDriver;
  cleanup(): Promise<void>;
}

/** `prefix` is the one a test's config names; by default one of the test's own. */
export async function createQueueFixture(
  name: string,
  prefix = uniquePrefix(name),
): Promise<QueueFixture> {
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
    outbox: new OutboxStore(ctx, scheduler),
    broadcasts: new BroadcastStore(ctx),
    driver,
    async cleanup() {
      await driver.close();
      await scheduler.close();
      await deleteKeys(redis, `${prefix}:*`);
      await redis.quit();
    },
  };
}
