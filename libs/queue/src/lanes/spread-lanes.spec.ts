import { NONE_LANE_SPREAD, drainJobId, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../queue.fixture';
import { readRouteStats, type LaneHead } from './lane-store';
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

function head(result: { kind: string }): LaneHead {
  if (result.kind !== 'head') throw new Error(`expected a head, got ${result.kind}`);
  return result as unknown as LaneHead;
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
    await f.enqueuer.enqueue({
      bot: 'bot',
      updateId,
      body: Buffer.from(`{"update_id":${updateId},"poll":{"id":"p"}}`),
      deliveries: [{ route: 'loose', lane: single(deliveryId), deliveryId }],
    });
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
    const gen = (await f.lanes.generation(lane))!;
    expect(await f.scheduler.queue('loose').getJob(drainJobId(lane, gen))).toBeDefined();
    expect(await f.scheduler.queue('loose').getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('moves a failing head to its own lane with its attempt state, and goes on with the next', async () => {
    const ids = collidingIds(3);
    for (const id of ids) await enqueue(id);
    const lane = storedLane(single(ids[0]));
    const gen = (await f.lanes.generation(lane))!;
    head(await f.lanes.begin(lane, gen));
    const own = ownLane(lane, ids[0]);
    const moved = await f.lanes.detach(
      lane,
      gen,
      ids[0],
      own,
      {
        consecutive5xx: 1,
        lastStatus: 500,
        lastError: 'HTTP 500',
        lastBody: 'oops',
        nextAttemptAt: 5_000,
      },
      'continue',
    );
    if (moved.kind !== 'detached') throw new Error('not detached');
    expect(moved.ownGen).toBeGreaterThan(gen);
    const next = head(moved.next);
    expect(next).toMatchObject({ attempt: 1, consecutive5xx: 0 });
    expect(next.entry.deliveryId).toBe(ids[1]);

    // The own lane waits out the backoff, then resumes the delivery's attempt count.
    expect(await f.lanes.begin(own, moved.ownGen!, 4_000)).toEqual({
      kind: 'wait',
      nextAttemptAt: 5_000,
    });
    expect(head(await f.lanes.begin(own, moved.ownGen!, 5_000))).toMatchObject({
      attempt: 2,
      consecutive5xx: 1,
      lastStatus: 500,
      lastBody: 'oops',
      lastError: 'HTTP 500',
    });
    // Nothing was delivered or lost: three queued, two lanes.
    expect(await readRouteStats(f.ctx, 'loose')).toMatchObject({
      queued: 3,
      lanes: 2,
      delivered: 0,
    });
  });

  it('yields or releases the spread lane like finish, and refuses a stale job', async () => {
    const ids = collidingIds(2);
    for (const id of ids) await enqueue(id);
    const lane = storedLane(single(ids[0]));
    const gen = (await f.lanes.generation(lane))!;
    const info = { consecutive5xx: 0, lastStatus: 503, lastError: 'HTTP 503', nextAttemptAt: 0 };
    expect(
      await f.lanes.detach(lane, gen + 1, ids[0], ownLane(lane, ids[0]), info, 'continue'),
    ).toEqual({
      kind: 'stale',
    });
    head(await f.lanes.begin(lane, gen));
    const yielded = await f.lanes.detach(lane, gen, ids[0], ownLane(lane, ids[0]), info, 'yield');
    expect(yielded).toMatchObject({ kind: 'detached', next: { kind: 'yield' } });
    const nextGen = (await f.lanes.generation(lane))!;
    head(await f.lanes.begin(lane, nextGen));
    const last = await f.lanes.detach(
      lane,
      nextGen,
      ids[1],
      ownLane(lane, ids[1]),
      info,
      'continue',
    );
    expect(last).toMatchObject({ kind: 'detached', next: { kind: 'done' } });
    expect(await f.lanes.generation(lane)).toBeUndefined();
    expect(await f.lanes.length(ownLane(lane, ids[1]))).toBe(1);
  });
});
