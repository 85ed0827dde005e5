import { DeadReason, laneId } from '@relaygram/contracts';
import type { TakenDrainJob } from '../testing/drain-job-driver';
import { HandOffListener } from '../testing/hand-off-listener';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import type { ClaimedHead, DrainResult, DrainStep } from './drain-script-io';
import { truncateUtf8, type RetryInfo } from './lane-store';
import { readBotStats, readRouteStats } from './lane-stats';
import { newDeliveryId } from './update-enqueuer';

const ROUTE = 'shop';
const BOT = 'bot-a';
const LANE = laneId(ROUTE, BOT, { kind: 'chat', chatId: 42 });
const OTHER = laneId(ROUTE, BOT, { kind: 'chat', chatId: 7 });
const DISPATCHER = 'host:1:abcd';

const body = (updateId: number) =>
  Buffer.from(JSON.stringify({ update_id: updateId, message: { chat: { id: 42 }, text: 'x' } }));

function head(result: DrainResult | DrainStep): ClaimedHead {
  const step = 'step' in result ? result.step : result;
  if (step.kind !== 'head') throw new Error(`expected a head, got ${step.kind}`);
  return step;
}

function retryInfo(overrides: Partial<RetryInfo> = {}): RetryInfo {
  return {
    consecutive5xx: 0,
    lastStatus: 503,
    lastError: 'HTTP 503',
    nextAttemptAt: 0,
    ...overrides,
  };
}

describe('LaneStore', () => {
  let f: QueueFixture;
  const ids: string[] = [];

  async function enqueue(updateIds: number[], lane = LANE): Promise<void> {
    for (const updateId of updateIds) {
      const deliveryId = newDeliveryId();
      ids.push(deliveryId);
      const result = await f.enqueuer.enqueue({
        bot: BOT,
        updateId,
        body: body(updateId),
        deliveries: [{ route: ROUTE, lane, deliveryId }],
      });
      await result.jobsAdded;
    }
  }

  async function take(): Promise<TakenDrainJob> {
    const taken = await f.driver.take(ROUTE);
    if (!taken) throw new Error('no drain job waits');
    return taken;
  }

  const drains = () => f.redis.hgetall(f.ctx.keys.drainJobs(ROUTE));
  const ready = () => f.redis.lrange(f.ctx.keys.readyLanes(ROUTE), 0, -1);
  const state = (lane = LANE) => f.redis.hgetall(f.ctx.keys.laneState(lane));

  beforeEach(async () => {
    f = await createQueueFixture('lanes');
    ids.length = 0;
  });
  afterEach(() => f.cleanup());

  it('lists a newly scheduled lane as ready once and arms one drain job for it', async () => {
    await enqueue([1, 2]);
    expect(await ready()).toEqual([LANE]);
    const armed = await drains();
    expect(Object.keys(armed)).toHaveLength(1);
    const [jobId] = Object.keys(armed);
    expect(armed[jobId]).toMatch(/^a\d+$/);
    expect(await f.redis.hgetall(f.ctx.keys.drainState(ROUTE))).toMatchObject({
      armed: '1',
      pending: '1',
    });
    expect(await f.scheduler.queue(ROUTE).getJob(jobId)).toBeDefined();
    expect(await state()).toMatchObject({ q: 'r' });
  });

  it('a started job claims the ready lane and begins its head with a counted attempt', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    expect(first).toMatchObject({ lane: LANE, attempt: 1, consecutive5xx: 0 });
    expect(first.entry).toMatchObject({ deliveryId: ids[0], updateId: 1, bot: BOT, route: ROUTE });
    expect(first.entry.body.equals(body(1))).toBe(true);
    expect(await ready()).toEqual([]);
    expect(await drains()).toEqual({ [job.ref.jobId]: `l${LANE}` });
    expect(await state()).toMatchObject({ job: job.ref.jobId, attempts: '1' });
    expect((await state()).q).toBeUndefined();
  });

  it('finishes with continue: pops the head and begins the next in the same call', async () => {
    await enqueue([1, 2, 3]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    const next = head(await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue'));
    expect(next).toMatchObject({ lane: LANE, gen: first.gen, attempt: 1 });
    expect(next.entry.deliveryId).toBe(ids[1]);
    expect(await f.lanes.length(LANE)).toBe(2);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({
      queued: 2,
      delivered: 1,
      lanes: 1,
      dead: 0,
    });
    expect(await readBotStats(f.ctx, BOT)).toEqual({ queued: 2, dead: 0 });
  });

  it('releases an emptied lane and takes the next ready one; with nothing ready it ends or waits', async () => {
    await enqueue([1]);
    await enqueue([2], OTHER);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    expect(first.lane).toBe(LANE);
    const second = head(await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue'));
    expect(second.lane).toBe(OTHER);
    expect(await f.lanes.generation(LANE)).toBeUndefined();
    expect(await f.redis.sismember(f.ctx.keys.routeLanes(ROUTE), LANE)).toBe(0);

    const waiting = await f.lanes.finish(
      job.ref,
      second,
      { kind: 'delivered' },
      'continue',
      DISPATCHER,
    );
    expect(waiting.step).toEqual({ kind: 'idle' });
    expect(await drains()).toMatchObject({ [job.ref.jobId]: `i${DISPATCHER}` });
    expect(await f.redis.lrange(f.ctx.keys.idleJobs(ROUTE), 0, -1)).toEqual([
      `${DISPATCHER}|${job.ref.jobId}`,
    ]);
    const ended = await f.lanes.retire(job.ref);
    expect(ended.step).toEqual({ kind: 'end' });
    expect(await f.redis.llen(f.ctx.keys.idleJobs(ROUTE))).toBe(0);
    // The second job armed for OTHER never started: it is the only one left.
    expect(Object.values(await drains())).toEqual([expect.stringMatching(/^a/)]);
  });

  it('hands a newly scheduled lane straight to a waiting job of a live dispatcher', async () => {
    const inbox = await HandOffListener.start(f.ctx, DISPATCHER);
    await enqueue([1]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref, DISPATCHER));
    await f.lanes.heartbeat(DISPATCHER, 10_000, [{ route: ROUTE, slots: 4 }]);
    expect(
      (await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue', DISPATCHER)).step,
    ).toEqual({ kind: 'idle' });
    const jobsBefore = Object.keys(await drains());

    await enqueue([2, 3], OTHER);
    // No job armed, nothing listed: the lane went to the waiting job, head begun.
    expect(Object.keys(await drains())).toEqual(jobsBefore);
    expect(await ready()).toEqual([]);
    expect(await drains()).toEqual({ [job.ref.jobId]: `l${OTHER}` });
    const handOff = (await inbox.take())!;
    await inbox.settle();
    expect(inbox.pending).toBe(0);
    expect(handOff.jobId).toBe(job.ref.jobId);
    expect(handOff.head).toMatchObject({ lane: OTHER, attempt: 1, consecutive5xx: 0 });
    expect(handOff.head.entry.deliveryId).toBe(ids[1]);
    expect(handOff.head.entry.body.equals(body(2))).toBe(true);
    // The job finishes it like any head.
    const next = head(
      await f.lanes.finish(job.ref, handOff.head, { kind: 'delivered' }, 'continue', DISPATCHER),
    );
    expect(next.entry.deliveryId).toBe(ids[2]);
    // A hand-off the job missed is returned by retire.
    expect(head(await f.lanes.retire(job.ref)).entry.deliveryId).toBe(ids[2]);
    await inbox.close();
  });

  it('skips a waiting job whose dispatcher went silent: the lane is listed and a job armed', async () => {
    const inbox = await HandOffListener.start(f.ctx, DISPATCHER);
    await enqueue([1]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref, DISPATCHER));
    await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue', DISPATCHER);
    // No heartbeat from DISPATCHER: it is not live.
    await enqueue([2], OTHER);
    expect(await ready()).toEqual([OTHER]);
    const entries = await drains();
    expect(entries[job.ref.jobId]).toBe('x');
    expect(Object.values(entries).filter((e) => e.startsWith('a'))).toHaveLength(1);
    await inbox.settle();
    expect(inbox.pending).toBe(0);
    await inbox.close();
    // When its dispatcher comes back, the un-counted job counts again and takes what waits.
    expect(head(await f.lanes.retire(job.ref)).lane).toBe(OTHER);
    expect(await f.redis.hget(f.ctx.keys.drainState(ROUTE), 'armed')).toBe('2');
    expect(await ready()).toEqual([]);
  });

  it('answers stale to another lock token, generation or head, and changes nothing', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    const before = await state();
    const thief = { ...job.ref, lock: 'not-the-lock' };
    expect((await f.lanes.start(thief)).step).toEqual({ kind: 'stale' });
    expect((await f.lanes.finish(thief, first, { kind: 'delivered' }, 'continue')).step).toEqual({
      kind: 'stale',
    });
    expect(
      (
        await f.lanes.finish(
          job.ref,
          { ...first, gen: first.gen + 1 },
          { kind: 'delivered' },
          'continue',
        )
      ).step,
    ).toEqual({ kind: 'stale' });
    const notHead = { ...first, entry: { ...first.entry, deliveryId: ids[1] } };
    expect(
      (await f.lanes.finish(job.ref, notHead, { kind: 'delivered' }, 'continue')).step,
    ).toEqual({
      kind: 'stale',
    });
    expect((await f.lanes.retire(thief)).step).toEqual({ kind: 'stale' });
    expect(await state()).toEqual(before);
    expect(await f.lanes.length(LANE)).toBe(2);
  });

  it('a re-run of a job takes back its lane under a new generation and re-sends the head', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    // The dispatcher dies; BullMQ re-runs the job with a new lock token.
    const rerun = { ...job.ref, lock: 'second-run' };
    await f.redis.set(job.ref.lockKey, rerun.lock);
    const again = head(await f.lanes.start(rerun));
    expect(again).toMatchObject({ lane: LANE, attempt: 2 });
    expect(again.gen).toBeGreaterThan(first.gen);
    expect(again.entry.deliveryId).toBe(ids[0]);
    // The first run, woken up, is stale whatever it tries.
    expect((await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue')).step).toEqual({
      kind: 'stale',
    });
    expect(await f.lanes.length(LANE)).toBe(2);
  });

  it('yield: the lane goes to the tail of the ready list when another waits, else the job goes on', async () => {
    await enqueue([1, 2, 3]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    const alone = head(await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'yield'));
    expect(alone).toMatchObject({ lane: LANE, gen: first.gen });

    await enqueue([10], OTHER);
    const other = head(await f.lanes.finish(job.ref, alone, { kind: 'delivered' }, 'yield'));
    expect(other.lane).toBe(OTHER);
    expect(await ready()).toEqual([LANE]);
    expect(Number((await state()).gen)).toBeGreaterThan(first.gen);
    expect((await f.lanes.finish(job.ref, alone, { kind: 'delivered' }, 'continue')).step).toEqual({
      kind: 'stale',
    });
  });

  it('retry: the head backs off in its lane (delayed set), the job goes on, and a wake job is due', async () => {
    await enqueue([1, 2]);
    await enqueue([10], OTHER);
    const job = await take();
    const first = head(await f.lanes.start(job.ref, undefined, 1_000));
    const result = await f.lanes.finish(
      job.ref,
      first,
      {
        kind: 'retry',
        retry: retryInfo({
          consecutive5xx: 2,
          lastStatus: 500,
          lastBody: 'boom',
          lastError: 'HTTP 500',
          nextAttemptAt: 60_000,
        }),
      },
      'continue',
      undefined,
      1_000,
    );
    expect(head(result).lane).toBe(OTHER);
    expect(await f.redis.zscore(f.ctx.keys.delayedLanes(ROUTE), LANE)).toBe('60000');
    expect(await state()).toMatchObject({ q: 'd', next_at: '60000', c5xx: '2' });
    expect(result.jobs.wakes).toEqual([
      { route: ROUTE, jobId: expect.stringMatching(/^w\d+$/), at: 60_000 },
    ]);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({
      lastStatus: 500,
      lastError: 'HTTP 500',
      lastErrorAt: 1_000,
      backingOff: 1,
    });

    // Before it is due nothing takes it; once due, the next claim does, with its last answer.
    const done = await f.lanes.finish(
      job.ref,
      head(result),
      { kind: 'delivered' },
      'continue',
      undefined,
      59_000,
    );
    expect(done.step).toEqual({ kind: 'end' });
    const wake = await take();
    const due = head(await f.lanes.start(wake.ref, undefined, 60_000));
    expect(due).toMatchObject({
      lane: LANE,
      attempt: 2,
      consecutive5xx: 2,
      lastStatus: 500,
      lastBody: 'boom',
      lastError: 'HTTP 500',
    });
  });

  it('moves a dead head into a dead letter with its details, body cut to 1 KiB', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    const longBody = 'é'.repeat(700);
    const next = await f.lanes.finish(
      job.ref,
      first,
      {
        kind: 'dead',
        dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400, lastBody: longBody },
      },
      'continue',
      undefined,
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

  it('refuses to pop a head whose dead letter key holds another type', async () => {
    await enqueue([1]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    await f.redis.set(f.ctx.keys.deadLetter(ids[0]), 'not a hash');
    await expect(
      f.lanes.finish(
        job.ref,
        first,
        { kind: 'dead', dead: { reason: DeadReason.Rejected, attempts: 1 } },
        'continue',
      ),
    ).rejects.toThrow(/WRONGTYPE relaygram finish/);
    expect(await f.lanes.length(LANE)).toBe(1);
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 1, deadTotal: 0 });
  });

  it('starts a re-sent delivery that dies again with a clean dead letter', async () => {
    await enqueue([1]);
    await f.driver.finishOne(ROUTE, () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Poison, attempts: 8, lastStatus: 500, lastBody: 'stack trace' },
    }));
    expect(await f.dead.replay(ids[0], () => ({ lane: { kind: 'chat', chatId: 42 } }))).toBe(
      'queued',
    );
    const replayed = await f.driver.finishOne(ROUTE, () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Expired, attempts: 0 },
    }));
    expect(replayed).toMatchObject({ attempt: 1, consecutive5xx: 0 });
    expect(replayed.entry.replayedAt).toBeDefined();
    const letter = await f.dead.get(ids[0]);
    expect(letter).toMatchObject({ reason: DeadReason.Expired, attempts: 0 });
    expect(letter!.lastBody).toBeUndefined();
    expect(letter!.lastStatus).toBeUndefined();
  });

  it('stop: hands the lane on (to the ready list) and ends the job', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    const stopped = await f.lanes.finish(job.ref, first, { kind: 'none' }, 'stop');
    expect(stopped.step).toEqual({ kind: 'end' });
    expect(await ready()).toEqual([LANE]);
    expect(await f.lanes.length(LANE)).toBe(2);
    // Ending while a lane waits arms a successor.
    expect(stopped.jobs.arms).toHaveLength(1);
    const next = await f.scheduler.add(stopped.jobs).then(take);
    const again = head(await f.lanes.start(next.ref));
    expect(again).toMatchObject({ lane: LANE, attempt: 2 });
    expect(again.entry.deliveryId).toBe(ids[0]);
  });

  it('kills a whole lane, taking it from the job that held it', async () => {
    await enqueue([1, 2, 3]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    expect(await f.lanes.killLane(LANE, DeadReason.RouteRemoved)).toBe(3);
    expect(await f.lanes.length(LANE)).toBe(0);
    expect(await f.lanes.generation(LANE)).toBeUndefined();
    // The job that held the lane is now stale and can touch nothing.
    expect((await f.lanes.finish(job.ref, first, { kind: 'delivered' }, 'continue')).step).toEqual({
      kind: 'stale',
    });
    expect(await f.dead.get(ids[0])).toMatchObject({
      reason: DeadReason.RouteRemoved,
      attempts: 1,
    });
    expect(await f.dead.get(ids[2])).toMatchObject({
      reason: DeadReason.RouteRemoved,
      attempts: 0,
    });
    expect(await readRouteStats(f.ctx, ROUTE)).toMatchObject({ queued: 0, lanes: 0, dead: 3 });
    expect(await readBotStats(f.ctx, BOT)).toEqual({ queued: 0, dead: 3 });
    expect(await f.lanes.killLane(LANE, DeadReason.RouteRemoved)).toBe(0);
  });

  it('kills a backing-off lane with what its head last got', async () => {
    await enqueue([1, 2]);
    const job = await take();
    const first = head(await f.lanes.start(job.ref));
    await f.lanes.finish(
      job.ref,
      first,
      { kind: 'retry', retry: retryInfo({ lastBody: 'down', nextAttemptAt: Date.now() + 60_000 }) },
      'continue',
    );
    expect(await f.lanes.killLane(LANE, DeadReason.RouteRemoved)).toBe(2);
    expect(await f.redis.zcard(f.ctx.keys.delayedLanes(ROUTE))).toBe(0);
    expect(await f.dead.get(ids[0])).toMatchObject({
      reason: DeadReason.RouteRemoved,
      attempts: 1,
      lastStatus: 503,
      lastBody: 'down',
    });
  });

  it('lists the non-empty lanes of a route page by page', async () => {
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
