import { NONE_LANE_SPREAD, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import type { ClaimedHead, DrainResult, DrainStep } from './drain-script-io';
import { readRouteStats } from './lane-stats';
import { isSpreadLane, ownLane, storedLane } from './spread-lanes';
import { newDeliveryId } from './update-enqueuer';

const single = (deliveryId: string) => laneId('loose', 'bot', { kind: 'single', deliveryId });

/** Delivery ids whose single lanes share one spread lane. */
function collidingIds(count: number): string[] {
  const first = newDeliveryId();
  const ids = [first];
  while (ids.length < count) {
    const id = newDeliveryId();
    if (storedLane(single(id)) === storedLane(single(first))) ids.push(id);
  }
  return ids;
}

function head(result: DrainResult | DrainStep): ClaimedHead {
  const step = 'step' in result ? result.step : result;
  if (step.kind !== 'head') throw new Error(`expected a head, got ${step.kind}`);
  return step;
}

describe('spread lanes (none ordering)', () => {
  let f: QueueFixture;
  let updateId = 0;

  beforeEach(async () => {
    f = await createQueueFixture('spread');
  });
  afterEach(() => f.cleanup());

  async function enqueue(deliveryId: string): Promise<void> {
    updateId += 1;
    const result = await f.enqueuer.enqueue({
      bot: 'bot',
      updateId,
      body: Buffer.from(`{"update_id":${updateId},"poll":{"id":"p"}}`),
      deliveries: [{ route: 'loose', lane: single(deliveryId), deliveryId }],
    });
    await result.jobsAdded;
  }

  it('keeps single-delivery lanes in a spread lane picked by the delivery id', () => {
    const id = newDeliveryId();
    const lane = storedLane(single(id));
    expect(lane).toMatch(/^loose\.bot\.n\d+$/);
    expect(storedLane(single(id))).toBe(lane);
    expect(isSpreadLane(lane)).toBe(true);
    expect(isSpreadLane(single(id))).toBe(false);
    expect(ownLane(lane, id)).toBe(single(id));
    // Other lanes are kept as they are.
    const chat = laneId('loose', 'bot', { kind: 'chat', chatId: 5 });
    expect(storedLane(chat)).toBe(chat);
    const slots = new Set(Array.from({ length: 5000 }, () => storedLane(single(newDeliveryId()))));
    expect(slots.size).toBeGreaterThan(NONE_LANE_SPREAD * 0.9);
  });

  it('enqueues into the spread lane, one drain job for the lane', async () => {
    const ids = collidingIds(3);
    for (const id of ids) await enqueue(id);
    const lane = storedLane(single(ids[0]));
    expect(await f.lanes.length(lane)).toBe(3);
    expect(await f.redis.exists(f.ctx.keys.lane(single(ids[0])))).toBe(0);
    expect(await f.redis.lrange(f.ctx.keys.readyLanes('loose'), 0, -1)).toEqual([lane]);
    expect(await f.scheduler.queue('loose').getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('moves a failing head to its own lane with its attempt state, and goes on with the next', async () => {
    const ids = collidingIds(3);
    for (const id of ids) await enqueue(id);
    const lane = storedLane(single(ids[0]));
    const job = (await f.driver.take('loose'))!;
    const first = head(await f.lanes.start(job.ref, undefined, 1_000));
    const own = ownLane(lane, ids[0]);
    const moved = await f.lanes.finish(
      job.ref,
      first,
      {
        kind: 'detach',
        ownLane: own,
        retry: {
          consecutive5xx: 1,
          lastStatus: 500,
          lastError: 'HTTP 500',
          lastBody: 'oops',
          nextAttemptAt: 5_000,
        },
      },
      'continue',
      undefined,
      1_000,
    );
    const next = head(moved);
    expect(next).toMatchObject({ lane, attempt: 1, consecutive5xx: 0 });
    expect(next.entry.deliveryId).toBe(ids[1]);
    // The own lane backs off, with a wake job at its time.
    expect(await f.redis.zscore(f.ctx.keys.delayedLanes('loose'), own)).toBe('5000');
    expect(moved.jobs.wakes).toEqual([expect.objectContaining({ route: 'loose', at: 5_000 })]);

    // Once due, the next claim takes the own lane first, resuming the delivery's attempts.
    const last = head(
      await f.lanes.finish(job.ref, next, { kind: 'delivered' }, 'continue', undefined, 5_000),
    );
    expect(last.entry.deliveryId).toBe(ids[2]);
    const rest = await f.lanes.finish(
      job.ref,
      last,
      { kind: 'delivered' },
      'continue',
      undefined,
      5_000,
    );
    expect(head(rest)).toMatchObject({
      lane: own,
      attempt: 2,
      consecutive5xx: 1,
      lastStatus: 500,
      lastBody: 'oops',
      lastError: 'HTTP 500',
    });
    // Nothing was lost: one queued (two delivered), the own lane left.
    expect(await readRouteStats(f.ctx, 'loose')).toMatchObject({
      queued: 1,
      lanes: 1,
      delivered: 2,
    });
  });

  it('releases the spread lane once its last head moved out, and refuses a stale job', async () => {
    const ids = collidingIds(1);
    await enqueue(ids[0]);
    const lane = storedLane(single(ids[0]));
    const job = (await f.driver.take('loose'))!;
    const first = head(await f.lanes.start(job.ref));
    const info = {
      consecutive5xx: 0,
      lastStatus: 503,
      lastError: 'HTTP 503',
      nextAttemptAt: Date.now() + 60_000,
    };
    const stale = await f.lanes.finish(
      job.ref,
      { ...first, gen: first.gen + 1 },
      { kind: 'detach', ownLane: ownLane(lane, ids[0]), retry: info },
      'continue',
    );
    expect(stale.step).toEqual({ kind: 'stale' });
    const moved = await f.lanes.finish(
      job.ref,
      first,
      { kind: 'detach', ownLane: ownLane(lane, ids[0]), retry: info },
      'continue',
    );
    expect(moved.step).toEqual({ kind: 'end' });
    expect(await f.lanes.generation(lane)).toBeUndefined();
    expect(await f.lanes.length(ownLane(lane, ids[0]))).toBe(1);
  });
});
