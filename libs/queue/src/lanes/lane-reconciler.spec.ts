import { DeadReason, drainJobId, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../queue.fixture';
import { UpdateEnqueuer, newDeliveryId } from './update-enqueuer';
import type { DrainScheduler } from './drain-scheduler';

const body = (updateId: number) =>
  Buffer.from(JSON.stringify({ update_id: updateId, message: { chat: { id: 1 }, text: 'x' } }));

describe('LaneReconciler', () => {
  let f: QueueFixture;
  let updateId = 0;

  beforeEach(async () => {
    f = await createQueueFixture('reconcile');
  });
  afterEach(() => f.cleanup());

  async function enqueue(route: string, lane: string, withJob = true): Promise<string> {
    const deliveryId = newDeliveryId();
    // Without a job: ingress died between the script and the job add.
    const enqueuer = withJob
      ? f.enqueuer
      : new UpdateEnqueuer(f.ctx, {
          schedule: () => Promise.reject(new Error('killed before the job add')),
        } as unknown as DrainScheduler);
    updateId += 1;
    await enqueuer.enqueue({
      bot: 'bot-a',
      updateId,
      body: body(updateId),
      deliveries: [{ route, lane, deliveryId }],
    });
    return deliveryId;
  }

  async function jobOf(route: string, lane: string) {
    const gen = await f.lanes.generation(lane);
    return gen === undefined ? undefined : f.scheduler.queue(route).getJob(drainJobId(lane, gen));
  }

  it('gives a new generation and job to a lane whose job was never added', async () => {
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    await enqueue('shop', lane, false);
    const gen = (await f.lanes.generation(lane))!;
    expect(await jobOf('shop', lane)).toBeUndefined();

    expect(await f.reconciler.reconcile(['shop'])).toEqual({
      lanes: 1,
      restarted: 1,
      routeRemoved: 0,
    });
    expect(await f.lanes.generation(lane)).toBeGreaterThan(gen);
    expect(await jobOf('shop', lane)).toBeDefined();
    // Nothing left to do: a second pass restarts nothing.
    expect(await f.reconciler.reconcile(['shop'])).toEqual({
      lanes: 1,
      restarted: 0,
      routeRemoved: 0,
    });
  });

  it('restarts a lane whose job was deleted by hand or failed for good, and leaves live ones', async () => {
    const deleted = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    const failed = laneId('shop', 'bot-a', { kind: 'chat', chatId: 2 });
    const live = laneId('shop', 'bot-a', { kind: 'chat', chatId: 3 });
    for (const lane of [deleted, failed, live]) await enqueue('shop', lane);
    await (await jobOf('shop', deleted))!.remove();
    const failedGen = (await f.lanes.generation(failed))!;
    // What BullMQ leaves of a job that used up its attempts: its hash, and its id in `failed`.
    await f.redis.zadd(
      f.scheduler.queue('shop').toKey('failed'),
      Date.now(),
      drainJobId(failed, failedGen),
    );
    const liveGen = await f.lanes.generation(live);

    const report = await f.reconciler.reconcile(['shop']);
    expect(report).toEqual({ lanes: 3, restarted: 2, routeRemoved: 0 });
    expect(await jobOf('shop', deleted)).toBeDefined();
    expect(await f.lanes.generation(failed)).not.toBe(failedGen);
    expect(await jobOf('shop', failed)).toBeDefined();
    expect(await f.lanes.generation(live)).toBe(liveGen);
  });

  it('moves lanes of a route no replica serves to dead letters once the grace is over', async () => {
    const lane = laneId('gone', 'bot-a', { kind: 'shared' });
    const ids = [await enqueue('gone', lane), await enqueue('gone', lane)];
    // First met unconfigured now: the clock starts, nothing dies yet.
    expect(await f.reconciler.reconcile(['shop'], { now: 10_000, removedAfterMs: 5_000 })).toEqual({
      lanes: 0,
      restarted: 0,
      routeRemoved: 0,
    });
    expect(await f.lanes.length(lane)).toBe(2);
    expect(
      (await f.reconciler.reconcile(['shop'], { now: 15_000, removedAfterMs: 5_000 })).routeRemoved,
    ).toBe(2);
    expect(await f.lanes.length(lane)).toBe(0);
    for (const id of ids) {
      expect(await f.dead.get(id)).toMatchObject({ reason: DeadReason.RouteRemoved, attempts: 0 });
    }
  });

  it('spares a route another replica still reports configured', async () => {
    const lane = laneId('new-route', 'bot-a', { kind: 'shared' });
    await enqueue('new-route', lane);
    await f.reconciler.reportConfigured(['new-route'], 100_000);
    // This replica runs an older config without the route.
    expect(
      (await f.reconciler.reconcile(['shop'], { now: 104_000, removedAfterMs: 5_000 }))
        .routeRemoved,
    ).toBe(0);
    expect(await f.lanes.length(lane)).toBe(1);
    // Once every replica dropped it and the grace passed, it goes.
    expect(
      (await f.reconciler.reconcile(['shop'], { now: 106_000, removedAfterMs: 5_000 }))
        .routeRemoved,
    ).toBe(1);
  });
});
