import { UnrecoverableError } from 'bullmq';
import { ARMED_JOB_GRACE_MS, DeadReason, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { encodeEntry } from './delivery-entry';
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
          add: () => Promise.reject(new Error('killed before the job add')),
        } as unknown as DrainScheduler);
    updateId += 1;
    const result = await enqueuer.enqueue({
      bot: 'bot-a',
      updateId,
      body: body(updateId),
      deliveries: [{ route, lane, deliveryId }],
    });
    await result.jobsAdded;
    return deliveryId;
  }

  const drains = (route = 'shop') => f.redis.hgetall(f.ctx.keys.drainJobs(route));
  const waiting = (route = 'shop') => f.scheduler.queue(route).getJobCounts('waiting');

  it('re-arms a job that was armed but never added, once its grace is over', async () => {
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    await enqueue('shop', lane, false);
    const [lost] = Object.keys(await drains());
    expect(await waiting()).toEqual({ waiting: 0 });

    // Within the grace the add may still be on its way: spared.
    expect(await f.reconciler.reconcile(['shop'])).toEqual({
      lanes: 1,
      restarted: 0,
      jobsDropped: 0,
      routeRemoved: 0,
    });
    const later = Date.now() + ARMED_JOB_GRACE_MS + 1;
    expect(await f.reconciler.reconcile(['shop'], { now: later })).toEqual({
      lanes: 1,
      restarted: 1,
      jobsDropped: 1,
      routeRemoved: 0,
    });
    const entries = await drains();
    expect(entries[lost]).toBeUndefined();
    expect(Object.keys(entries)).toHaveLength(1);
    expect(await waiting()).toEqual({ waiting: 1 });
    // Nothing left to do: a second pass restarts nothing.
    expect(await f.reconciler.reconcile(['shop'], { now: later })).toMatchObject({
      restarted: 0,
      jobsDropped: 0,
    });
  });

  it('gives the lane of a job that failed for good back to the route, under a new generation', async () => {
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    await enqueue('shop', lane);
    const taken = (await f.driver.take('shop'))!;
    const step = (await f.lanes.start(taken.ref)).step;
    expect(step).toMatchObject({ kind: 'head', lane });
    const gen = (await f.lanes.generation(lane))!;
    // BullMQ gives up on the job (attempts used up, or a tiny maxStalledCount).
    await taken.job.moveToFailed(new UnrecoverableError('gone for good'), taken.ref.lock, false);
    expect(await taken.job.getState()).toBe('failed');

    const report = await f.reconciler.reconcile(['shop']);
    expect(report).toMatchObject({ lanes: 1, jobsDropped: 1, restarted: 1 });
    expect(await f.lanes.generation(lane)).toBeGreaterThan(gen);
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([lane]);
    expect(await waiting()).toEqual({ waiting: 1 });
    // The new job re-sends the head the failed one had begun.
    const next = (await f.driver.take('shop'))!;
    expect((await f.lanes.start(next.ref)).step).toMatchObject({ kind: 'head', lane, attempt: 2 });
  });

  it('drops a waiting job deleted by hand and leaves live ones', async () => {
    const deleted = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    const live = laneId('shop', 'bot-a', { kind: 'chat', chatId: 2 });
    await enqueue('shop', deleted);
    await enqueue('shop', live);
    const [first, second] = Object.keys(await drains());
    await (await f.scheduler.queue('shop').getJob(first))!.remove();
    const later = Date.now() + ARMED_JOB_GRACE_MS + 1;
    const report = await f.reconciler.reconcile(['shop'], { now: later });
    expect(report).toMatchObject({ lanes: 2, jobsDropped: 1, restarted: 1 });
    const entries = await drains();
    expect(entries[first]).toBeUndefined();
    expect(entries[second]).toBeDefined();
    expect(Object.keys(entries)).toHaveLength(2);
  });

  it('schedules a lane left by the engine before drain jobs (a generation, no owner, not listed)', async () => {
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    const entry = encodeEntry({
      deliveryId: newDeliveryId(),
      updateId: 1,
      bot: 'bot-a',
      route: 'shop',
      acceptedAt: Date.now(),
      body: body(1),
    });
    await f.redis
      .multi()
      .rpush(f.ctx.keys.lane(lane), entry)
      .hset(f.ctx.keys.laneState(lane), 'gen', 7)
      .sadd(f.ctx.keys.routeLanes('shop'), lane)
      .exec();
    const report = await f.reconciler.reconcile(['shop']);
    expect(report).toMatchObject({ lanes: 1, restarted: 2 });
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('shop'), 0, -1)).toEqual([lane]);
    expect(await waiting()).toEqual({ waiting: 1 });
  });

  it('arms a job for a backing-off lane that came due when its wake job was lost', async () => {
    const lane = laneId('shop', 'bot-a', { kind: 'chat', chatId: 1 });
    await enqueue('shop', lane);
    const taken = (await f.driver.take('shop'))!;
    const step = (await f.lanes.start(taken.ref)).step;
    if (step.kind !== 'head') throw new Error('no head');
    const due = Date.now() + 200;
    const retried = await f.lanes.finish(
      taken.ref,
      step,
      {
        kind: 'retry',
        retry: { consecutive5xx: 0, lastStatus: 503, lastError: 'HTTP 503', nextAttemptAt: due },
      },
      'continue',
    );
    expect(retried.step).toEqual({ kind: 'end' });
    // The wake job is never added (an operator deleted it).
    expect(retried.jobs.wakes).toHaveLength(1);
    expect(await f.reconciler.reconcile(['shop'])).toMatchObject({ restarted: 0 });
    expect(await waiting()).toEqual({ waiting: 0 });
    expect(await f.reconciler.reconcile(['shop'], { now: due + 1 })).toMatchObject({
      restarted: 1,
    });
    expect(await waiting()).toEqual({ waiting: 1 });
  });

  it('moves lanes of a route no replica serves to dead letters once the grace is over', async () => {
    const lane = laneId('gone', 'bot-a', { kind: 'shared' });
    const ids = [await enqueue('gone', lane), await enqueue('gone', lane)];
    // First met unconfigured now: the clock starts, nothing dies yet.
    expect(await f.reconciler.reconcile(['shop'], { now: 10_000, removedAfterMs: 5_000 })).toEqual({
      lanes: 0,
      restarted: 0,
      jobsDropped: 0,
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
    // Its drain bookkeeping goes with it.
    expect(await f.redis.exists(f.ctx.keys.readyLanes('gone'), f.ctx.keys.drainJobs('gone'))).toBe(
      0,
    );
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
