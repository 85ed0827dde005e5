import { DeadReason, DELIVERY_LOG_DEFAULTS, laneId } from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import type { FinishOutcome } from '../lanes/lane-store';
import { newDeliveryId } from '../lanes/update-enqueuer';

const BOT = 'bot-a';
const ROUTE = 'shop';
const OTHER = 'site';
const lane = (route: string, chat = 42) => laneId(route, BOT, { kind: 'chat', chatId: chat });
const body = (updateId: number) => Buffer.from(JSON.stringify({ update_id: updateId }));

type Entry = Record<string, string>;

function entries(raw: [string, string[]][]): Entry[] {
  return raw.map(([, fields]) => {
    const entry: Entry = {};
    for (let i = 0; i < fields.length; i += 2) entry[fields[i]] = fields[i + 1];
    return entry;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the delivery log, as the scripts record it', () => {
  let f: QueueFixture;

  const updateLog = async () => entries(await f.redis.xrange(f.ctx.keys.updateLog(BOT), '-', '+'));
  const attemptLog = async (route = ROUTE) =>
    entries(await f.redis.xrange(f.ctx.keys.attemptLog(route), '-', '+'));

  async function enqueue(updateId: number, routes: string[], chat = 42) {
    const deliveries = routes.map((route) => ({
      route,
      lane: lane(route, chat),
      deliveryId: newDeliveryId(),
    }));
    const result = await f.enqueuer.enqueue({
      bot: BOT,
      updateId,
      body: body(updateId),
      deliveries,
    });
    await result.jobsAdded;
    return { result, deliveries };
  }

  beforeEach(async () => {
    f = await createQueueFixture('dlog-rec');
  });
  afterEach(() => f.cleanup());

  it('records each update ingress meets: queued with its deliveries, ignored, duplicate', async () => {
    const { deliveries } = await enqueue(1, [ROUTE, OTHER]);
    await enqueue(2, []);
    const again = await enqueue(1, [ROUTE, OTHER]);
    expect(again.result.status).toBe('duplicate');
    expect(await updateLog()).toEqual([
      {
        u: '1',
        s: 'queued',
        d: `${lane(ROUTE)} ${deliveries[0].deliveryId} ${lane(OTHER)} ${deliveries[1].deliveryId}`,
      },
      { u: '2', s: 'ignored', d: '' },
      { u: '1', s: 'duplicate', d: '' },
    ]);
    const ttl = await f.redis.pttl(f.ctx.keys.updateLog(BOT));
    expect(ttl).toBeGreaterThan(DELIVERY_LOG_DEFAULTS.maxAgeMs - 60_000);
    expect(ttl).toBeLessThanOrEqual(DELIVERY_LOG_DEFAULTS.maxAgeMs);
  });

  it('records one entry per attempt with an outcome, and none for a lane handed back', async () => {
    const { deliveries } = await enqueue(10, [ROUTE]);
    const id = deliveries[0].deliveryId;
    const finish = (outcome: FinishOutcome) => f.driver.finishOne(ROUTE, () => outcome);
    await finish({ kind: 'none' });
    const nextAt = Date.now() - 1;
    await finish({
      kind: 'retry',
      retry: { consecutive5xx: 1, lastStatus: 503, lastError: 'HTTP 503', nextAttemptAt: nextAt },
      record: { status: 503, error: null, durationMs: 12, body: Buffer.from('x'.repeat(600)) },
    });
    await finish({
      kind: 'retry',
      retry: { consecutive5xx: 1, lastStatus: 0, lastError: 'timeout', nextAttemptAt: nextAt },
      record: { status: null, error: 'timeout', durationMs: 10_000 },
    });
    await finish({
      kind: 'delivered',
      record: { status: 200, error: null, durationMs: 3, body: Buffer.from('{"ok":true}') },
    });

    // The attempt handed back counted as begun: the next one is the second.
    const logged = await attemptLog();
    expect(logged).toEqual([
      {
        d: id,
        u: '10',
        b: BOT,
        n: '2',
        o: 'retry',
        s: '503',
        e: '',
        t: '12',
        x: 'x'.repeat(512),
        r: String(nextAt),
      },
      {
        d: id,
        u: '10',
        b: BOT,
        n: '3',
        o: 'retry',
        s: '',
        e: 'timeout',
        t: '10000',
        x: '',
        r: String(nextAt),
      },
      {
        d: id,
        u: '10',
        b: BOT,
        n: '4',
        o: 'delivered',
        s: '200',
        e: '',
        t: '3',
        x: '{"ok":true}',
        r: '',
      },
    ]);
  });

  it('records a death, an expiry and a detach (a retry in a lane of its own)', async () => {
    const spread = laneId(ROUTE, BOT, { kind: 'single', deliveryId: 'x' });
    const first = await enqueue(20, [ROUTE], 1);
    await f.driver.finishOne(ROUTE, () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400 },
      record: { status: 400, error: null, durationMs: 5, body: Buffer.from('bad request') },
    }));
    const second = await enqueue(21, [ROUTE], 2);
    await f.driver.finishOne(ROUTE, () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Expired, attempts: 0 },
      record: { status: null, error: 'expired', durationMs: 0 },
    }));
    const third = await f.enqueuer.enqueue({
      bot: BOT,
      updateId: 22,
      body: body(22),
      deliveries: [{ route: ROUTE, lane: spread, deliveryId: newDeliveryId() }],
    });
    await third.jobsAdded;
    await f.driver.finishOne(ROUTE, (head) => ({
      kind: 'detach',
      ownLane: laneId(ROUTE, BOT, { kind: 'single', deliveryId: head.entry.deliveryId }),
      retry: { consecutive5xx: 0, lastStatus: 429, lastError: 'HTTP 429', nextAttemptAt: 99 },
      record: { status: 429, error: null, durationMs: 7 },
    }));
    const logged = await attemptLog();
    expect(logged.map((e) => [e.d, e.u, e.o, e.s, e.e, e.t, e.x, e.r])).toEqual([
      [first.deliveries[0].deliveryId, '20', 'dead', '400', '', '5', 'bad request', ''],
      [second.deliveries[0].deliveryId, '21', 'dead', '', 'expired', '0', '', ''],
      [expect.any(String), '22', 'retry', '429', '', '7', '', '99'],
    ]);
  });

  it('keeps a log near its cap however many entries are written', async () => {
    f.ctx.deliveryLog.set({ ...DELIVERY_LOG_DEFAULTS, updatesPerBot: 100 });
    for (let id = 0; id < 1_000; id++) await enqueue(id, []);
    const length = await f.redis.xlen(f.ctx.keys.updateLog(BOT));
    // MAXLEN ~ drops whole nodes (stream-node-max-entries, 100 by default) only.
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThanOrEqual(200);
    const [last] = entries(
      await f.redis.xrevrange(f.ctx.keys.updateLog(BOT), '+', '-', 'COUNT', 1),
    );
    expect(last.u).toBe('999');
  });

  it('drops entries older than max_age at the next write, and the idle log with its TTL', async () => {
    f.ctx.deliveryLog.set({ ...DELIVERY_LOG_DEFAULTS, maxAgeMs: 300 });
    for (let id = 0; id < 5; id++) await enqueue(id, []);
    expect(await f.redis.xlen(f.ctx.keys.updateLog(BOT))).toBe(5);
    await sleep(350);
    await enqueue(5, []);
    expect((await updateLog()).map((e) => e.u)).toEqual(['5']);
    expect(await f.redis.pttl(f.ctx.keys.updateLog(BOT))).toBeLessThanOrEqual(300);
    await sleep(400);
    expect(await f.redis.exists(f.ctx.keys.updateLog(BOT))).toBe(0);
  });

  it('records nothing when the log is off', async () => {
    f.ctx.deliveryLog.set({ ...DELIVERY_LOG_DEFAULTS, enabled: false });
    await enqueue(1, [ROUTE]);
    await enqueue(1, [ROUTE]);
    await f.driver.finishOne(ROUTE, () => ({
      kind: 'delivered',
      record: { status: 200, error: null, durationMs: 1 },
    }));
    expect(await f.redis.exists(f.ctx.keys.updateLog(BOT), f.ctx.keys.attemptLog(ROUTE))).toBe(0);
  });

  it('never lets a log key of the wrong type hold up an update or an attempt', async () => {
    await f.redis.set(f.ctx.keys.updateLog(BOT), 'not a stream');
    await f.redis.set(f.ctx.keys.attemptLog(ROUTE), 'not a stream');
    const { result } = await enqueue(1, [ROUTE]);
    expect(result.status).toBe('queued');
    await f.driver.finishOne(ROUTE, () => ({ kind: 'delivered' }));
    expect(await f.redis.llen(f.ctx.keys.lane(lane(ROUTE)))).toBe(0);
    expect(await f.redis.get(f.ctx.keys.attemptLog(ROUTE))).toBe('not a stream');
  });
});
