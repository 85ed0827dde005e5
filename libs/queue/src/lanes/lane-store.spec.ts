import { DeadReason, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../queue.fixture';
import { newDeliveryId } from './update-enqueuer';
import {
  readBotStats,
  readRouteStats,
  truncateUtf8,
  type BeginResult,
  type LaneHead,
} from './lane-store';

const ROUTE = 'shop';
const BOT = 'bot-a';
const LANE = laneId(ROUTE, BOT, { kind: 'chat', chatId: 42 });

const body = (updateId: number) =>
  Buffer.from(JSON.stringify({ update_id: updateId, message: { chat: { id: 42 }, text: 'x' } }));

function head(result: BeginResult | { kind: string }): LaneHead {
  if (result.kind !== 'head') throw new Error(`expected a head, got ${result.kind}`);
  return result as LaneHead & { kind: 'head' };
}

describe('LaneStore', () => {
  let f: QueueFixture;
  const ids: string[] = [];

  async function enqueue(updateIds: number[], lane = LANE): Promise<void> {
    for (const updateId of updateIds) {
      const deliveryId = newDeliveryId();
      ids.push(deliveryId);
      await f.enqueuer.enqueue({
        bot: BOT,
        updateId,
        body: body(updateId),
        deliveries: [{ route: ROUTE, lane, deliveryId }],
      });
    }
  }

  beforeEach(async () => {
    f = await createQueueFixture('lanes');
    ids.length = 0;
  });
  afterEach(() => f.cleanup());

  it('begins the head with a counted attempt, and counts it again when a job re-runs', async () => {
    await enqueue([1, 2]);
    const gen = (await f.lanes.generation(LANE))!;
    const first = head(await f.lanes.begin(LANE, gen));
    expect(first).toMatchObject({ attempt: 1, consecutive5xx: 0 });
    expect(first.entry).toMatchObject({ deliveryId: ids[0], updateId: 1, bot: BOT, route: ROUTE });
    expect(first.entry.body.equals(body(1))).toBe(true);
    expect(first.lastStatus).toBeUndefined();
    // A crash mid-attempt: the re-run job sends the same head as attempt 2.
    expect(head(await f.lanes.begin(LANE, gen))).toMatchObject({ attempt: 2 });
  });

  it('answers stale to any other generation and counts nothing', async () => {
    await enqueue([1]);
    const gen = (await f.lanes.generation(LANE))!;
    expect(await f.lanes.begin(LANE, gen + 1)).toEqual({ kind: 'stale' });
    expect(await f.lanes.finish(LANE, gen + 1, ids[0], { delivered: true }, 'continue')).toEqual({
      kind: 'stale',
    });
    expect(await f.lanes.retry(LANE, gen + 1, retryInfo())).toBe(false);
    expect(head(await f.lanes.begin(LANE, gen)).attempt).toBe(1);
    expect(await f.lanes.length(LANE)).toBe(1);
  });

  it('finishes with continue: pops the head and begins the next in the same call', async () => {
    await enqueue([1, 2, 3]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    head(await f.lanes.begin(LANE, gen));
    const next = head(await f.lanes.finish(LANE, gen, ids[0], { delivered: true }, 'continue'));
    expect(next).toMatchObject({ attempt: 1, consecutive5xx: 0 });
    expect(next.entry.deliveryId).toBe(ids[1]);
    expect(next.lastStatus).toBeUndefined();
    expect(await f.lanes.length(LANE)).toBe(2);
    const stats = await readRouteStats(f.ctx, ROUTE);
    expect(stats).toMatchObject({ queued: 2, delivered: 1, lanes: 1, dead: 0 });
    expect(await readBotStats(f.ctx, BOT)).toEqual({ queued: 2, dead: 0 });
  });

  it('releases an emptied lane, so the next enqueue schedules it afresh', async () => {
    await enqueue([1]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    expect(await f.lanes.finish(LANE, gen, ids[0], { delivered: true }, 'continue')).toEqual({
      kind: 'done',
    });
    expect(await f.lanes.generation(LANE)).toBeUndefined();
    expect(await f.redis.exists(f.ctx.keys.laneState(LANE))).toBe(0);
    expect(await f.redis.sismember(f.ctx.keys.routeLanes(ROUTE), LANE)).toBe(0);
    await enqueue([2]);
    expect(await f.lanes.generation(LANE)).toBeGreaterThan(gen);
  });

  it('yields the lane to a new generation; the old job becomes stale', async () => {
    await enqueue([1, 2]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    const result = await f.lanes.finish(LANE, gen, ids[0], { delivered: true }, 'yield');
    expect(result.kind).toBe('yield');
    const next = (result as { gen: number }).gen;
    expect(next).toBeGreaterThan(gen);
    expect(await f.lanes.generation(LANE)).toBe(next);
    expect(await f.lanes.begin(LANE, gen)).toEqual({ kind: 'stale' });
    expect(head(await f.lanes.begin(LANE, next)).entry.deliveryId).toBe(ids[1]);
  });

  it('holds the lane: the generation stays and nothing is begun', async () => {
    await enqueue([1, 2]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    expect(await f.lanes.finish(LANE, gen, ids[0], { delivered: true }, 'hold')).toEqual({
      kind: 'hold',
    });
    expect(await f.lanes.generation(LANE)).toBe(gen);
    expect(head(await f.lanes.begin(LANE, gen))).toMatchObject({ attempt: 1 });
  });

  it('refuses to finish a delivery that is not the head', async () => {
    await enqueue([1, 2]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    expect(await f.lanes.finish(LANE, gen, ids[1], { delivered: true }, 'continue')).toEqual({
      kind: 'stale',
    });
    expect(await f.lanes.length(LANE)).toBe(2);
  });

  it('moves a dead head into a dead letter with its details, body cut to 1 KiB', async () => {
    await enqueue([1, 2]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    const longBody = 'é'.repeat(700);
    const next = await f.lanes.finish(
      LANE,
      gen,
      ids[0],
      {
        delivered: false,
        dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400, lastBody: longBody },
      },
      'continue',
      1_000_000,
    );
    expect(head(next).entry.deliveryId).toBe(ids[1]);
    const letter = await f.dead.get(ids[0]);
    expect(letter).toMatchObject({
      deliveryId: ids[0],
      route: ROUTE,
      bot: BOT,
      updateId: 1,
      reason: DeadReason.Rejected,
      attempts: 1,
      lastStatus: 400,
      deadAt: 1_000_000,
    });
    expect(letter!.update.equals(body(1))).toBe(true);
    expect(Buffer.byteLength(letter!.lastBody!)).toBe(1024);
    expect(letter!.lastBody).toBe('é'.repeat(512));
    const ttl = await f.redis.pttl(f.ctx.keys.deadLetter(ids[0]));
    expect(ttl).toBeGreaterThan(6 * 24 * 3600_000);
    expect(await f.redis.zscore(f.ctx.keys.deadByBot(BOT), ids[0])).toBe('1000000');
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 1, deadTotal: 1, dead: 1 });
    expect(await readBotStats(f.ctx, BOT)).toEqual({ queued: 1, dead: 1 });
  });

  it('keeps a retried head waiting until its next attempt, with what it last got', async () => {
    await enqueue([1]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen, 1_000));
    expect(
      await f.lanes.retry(
        LANE,
        gen,
        {
          ...retryInfo(),
          consecutive5xx: 2,
          lastStatus: 500,
          lastBody: 'boom',
          nextAttemptAt: 5_000,
        },
        1_000,
      ),
    ).toBe(true);
    expect(await f.lanes.begin(LANE, gen, 4_000)).toEqual({ kind: 'wait', nextAttemptAt: 5_000 });
    const again = head(await f.lanes.begin(LANE, gen, 5_000));
    expect(again).toMatchObject({
      attempt: 2,
      consecutive5xx: 2,
      lastStatus: 500,
      lastBody: 'boom',
      lastError: 'HTTP 500',
    });
    const stats = await readRouteStats(f.ctx, ROUTE);
    expect(stats).toMatchObject({ lastStatus: 500, lastError: 'HTTP 500', lastErrorAt: 1_000 });
  });

  it('starts a re-sent delivery that dies again with a clean dead letter', async () => {
    await enqueue([1]);
    let gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    await f.lanes.finish(
      LANE,
      gen,
      ids[0],
      {
        delivered: false,
        dead: { reason: DeadReason.Poison, attempts: 8, lastStatus: 500, lastBody: 'stack trace' },
      },
      'continue',
    );
    await f.dead.replay(ids[0], () => ({ lane: { kind: 'chat', chatId: 42 } }));
    gen = (await f.lanes.generation(LANE))!;
    const replayed = head(await f.lanes.begin(LANE, gen));
    expect(replayed).toMatchObject({ attempt: 1, consecutive5xx: 0 });
    expect(replayed.entry.replayedAt).toBeDefined();
    await f.lanes.finish(
      LANE,
      gen,
      ids[0],
      { delivered: false, dead: { reason: DeadReason.Expired, attempts: 0 } },
      'continue',
    );
    const letter = await f.dead.get(ids[0]);
    expect(letter).toMatchObject({ reason: DeadReason.Expired, attempts: 0 });
    expect(letter!.lastBody).toBeUndefined();
    expect(letter!.lastStatus).toBeUndefined();
  });

  it('kills a whole lane, taking it from the job that held it', async () => {
    await enqueue([1, 2, 3]);
    const gen = (await f.lanes.generation(LANE))!;
    head(await f.lanes.begin(LANE, gen));
    await f.lanes.retry(LANE, gen, { ...retryInfo(), lastStatus: 503, lastBody: 'down' });
    expect(await f.lanes.killLane(LANE, DeadReason.RouteRemoved)).toBe(3);
    expect(await f.lanes.length(LANE)).toBe(0);
    expect(await f.lanes.generation(LANE)).toBeUndefined();
    // The job that held the lane is now stale and can touch nothing.
    expect(await f.lanes.begin(LANE, gen)).toEqual({ kind: 'stale' });
    const first = await f.dead.get(ids[0]);
    expect(first).toMatchObject({
      reason: DeadReason.RouteRemoved,
      attempts: 1,
      lastStatus: 503,
      lastBody: 'down',
    });
    expect(await f.dead.get(ids[2])).toMatchObject({
      reason: DeadReason.RouteRemoved,
      attempts: 0,
    });
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 0, lanes: 0, dead: 3 });
    expect(await f.lanes.killLane(LANE, DeadReason.RouteRemoved)).toBe(0);
  });

  it('lists the scheduled lanes of a route page by page', async () => {
    for (let chat = 0; chat < 30; chat++) {
      await enqueue([100 + chat], laneId(ROUTE, BOT, { kind: 'chat', chatId: chat }));
    }
    const seen: string[] = [];
    for await (const page of f.lanes.lanesOf(ROUTE, 7)) seen.push(...page);
    expect(new Set(seen).size).toBe(30);
  });
});

describe('truncateUtf8', () => {
  it('cuts on a character boundary and leaves short text alone', () => {
    expect(truncateUtf8('abc', 10)).toBe('abc');
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
  });
});

function retryInfo() {
  return { consecutive5xx: 0, lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: 0 };
}
