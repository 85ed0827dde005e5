import { DeadReason, DELIVERY_LOG_DEFAULTS, laneId } from '@relaygram/contracts';
import type { LaneResolver } from '../dead-letters/dead-letter-store';
import type { FinishOutcome } from '../lanes/lane-store';
import { newDeliveryId } from '../lanes/update-enqueuer';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { DeliveryLogReader } from './delivery-log-reader';
import { attemptView, updateTraceView } from './delivery-log-view';

const BOT = 'bot-a';
const lane = (route: string, chat = 42) => laneId(route, BOT, { kind: 'chat', chatId: chat });
const body = (updateId: number) => Buffer.from(JSON.stringify({ update_id: updateId }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const retry = (status: number, nextAttemptAt: number, text = ''): FinishOutcome => ({
  kind: 'retry',
  retry: { consecutive5xx: 1, lastStatus: status, lastError: `HTTP ${status}`, nextAttemptAt },
  record: { status, error: null, durationMs: 4, body: Buffer.from(text) },
});

describe('DeliveryLogReader', () => {
  let f: QueueFixture;
  let reader: DeliveryLogReader;

  async function enqueue(updateId: number, routes: readonly string[], chat = 42) {
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
    return deliveries;
  }

  beforeEach(async () => {
    f = await createQueueFixture('dlog-read');
    reader = new DeliveryLogReader(f.ctx);
  });
  afterEach(() => f.cleanup());

  it('traces an update fanned out to three routes: delivered, retrying, dead', async () => {
    const before = Date.now();
    const [ok, flaky, broken] = await enqueue(7, ['ok', 'flaky', 'broken']);
    await f.driver.finishOne('ok', () => ({
      kind: 'delivered',
      record: { status: 200, error: null, durationMs: 3, body: Buffer.from('{"ok":true}') },
    }));
    await f.driver.finishOne('flaky', () => retry(503, Date.now() - 1, 'busy'));
    const nextAt = Date.now() + 60_000;
    await f.driver.finishOne('flaky', () => retry(503, nextAt, 'still busy'));
    await f.driver.finishOne('broken', () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400 },
      record: { status: 400, error: null, durationMs: 2, body: Buffer.from('no such chat') },
    }));
    await enqueue(7, ['ok', 'flaky', 'broken']);

    const trace = await reader.trace(BOT, 7);
    expect(trace).toMatchObject({ bot: BOT, updateId: 7, status: 'queued' });
    expect(trace!.receivedAt).toBeGreaterThanOrEqual(before - 5);
    expect(trace!.duplicatesAt).toHaveLength(1);
    const byRoute = Object.fromEntries(trace!.deliveries.map((d) => [d.route, d]));
    expect(byRoute.ok).toMatchObject({ deliveryId: ok.deliveryId, state: 'delivered' });
    expect(byRoute.ok.attempts.map((a) => [a.attempt, a.status, a.body])).toEqual([
      [1, 200, '{"ok":true}'],
    ]);
    expect(byRoute.flaky).toMatchObject({
      deliveryId: flaky.deliveryId,
      state: 'retrying',
      nextAttemptAt: nextAt,
    });
    expect(byRoute.flaky.attempts.map((a) => [a.attempt, a.outcome, a.body])).toEqual([
      [1, 'retry', 'busy'],
      [2, 'retry', 'still busy'],
    ]);
    expect(byRoute.broken).toMatchObject({ deliveryId: broken.deliveryId, state: 'dead' });
    expect(byRoute.broken.attempts[0]).toMatchObject({ status: 400, body: 'no such chat' });

    const view = updateTraceView(trace!);
    expect(view).toMatchObject({ bot: BOT, update_id: 7, status: 'queued' });
    expect(view.duplicates_at[0]).toMatch(/^\d{4}-\d\d-\d\dT/);
    const flakyView = view.deliveries.find((d) => d.route === 'flaky')!;
    expect(flakyView.next_attempt_at).toBe(new Date(nextAt).toISOString());
    expect(flakyView.attempts[1]).toMatchObject({
      delivery_id: flaky.deliveryId,
      update_id: 7,
      bot: BOT,
      route: 'flaky',
      attempt: 2,
      outcome: 'retry',
      status: 503,
      error: null,
      duration_ms: 4,
      body: 'still busy',
      next_attempt_at: new Date(nextAt).toISOString(),
    });
  });

  it('says queued for a delivery waiting in its lane, behind another or not yet begun', async () => {
    const [first] = await enqueue(1, ['shop']);
    const [second] = await enqueue(2, ['shop']);
    const one = await reader.trace(BOT, 1);
    const two = await reader.trace(BOT, 2);
    expect(one!.deliveries[0]).toMatchObject({ deliveryId: first.deliveryId, state: 'queued' });
    expect(two!.deliveries[0]).toMatchObject({ deliveryId: second.deliveryId, state: 'queued' });
  });

  it('says queued for a dead letter re-sent to its lane, and dead once its letter is deleted', async () => {
    const die = (): FinishOutcome => ({
      kind: 'dead',
      dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400 },
      record: { status: 400, error: null, durationMs: 2 },
    });
    const [resent] = await enqueue(11, ['shop'], 1);
    const [deleted] = await enqueue(12, ['shop'], 2);
    await f.driver.finishOne('shop', die);
    await f.driver.finishOne('shop', die);
    const stateOf = async (updateId: number) => (await reader.trace(BOT, updateId))!.deliveries[0];
    expect(await stateOf(11)).toMatchObject({ deliveryId: resent.deliveryId, state: 'dead' });

    const sameLane: LaneResolver = () => ({ lane: { kind: 'chat', chatId: 1 } });
    expect(await f.dead.replay(resent.deliveryId, sameLane)).toBe('queued');
    expect(await stateOf(11)).toMatchObject({ state: 'queued' });
    expect(await f.dead.delete(deleted.deliveryId)).toBe(true);
    expect(await stateOf(12)).toMatchObject({ deliveryId: deleted.deliveryId, state: 'dead' });
  });

  it('follows a retry moved to a lane of its own (none ordering)', async () => {
    const deliveryId = newDeliveryId();
    const single = laneId('fast', BOT, { kind: 'single', deliveryId });
    await f.enqueuer.enqueue({
      bot: BOT,
      updateId: 3,
      body: body(3),
      deliveries: [{ route: 'fast', lane: single, deliveryId }],
    });
    const nextAt = Date.now() + 60_000;
    await f.driver.finishOne('fast', () => ({
      kind: 'detach',
      ownLane: single,
      retry: { consecutive5xx: 0, lastStatus: 0, lastError: 'timeout', nextAttemptAt: nextAt },
      record: { status: null, error: 'timeout', durationMs: 10_000 },
    }));
    const trace = await reader.trace(BOT, 3);
    expect(trace!.deliveries[0]).toMatchObject({ state: 'retrying', nextAttemptAt: nextAt });
    expect(trace!.deliveries[0].attempts[0]).toMatchObject({ status: null, error: 'timeout' });
  });

  it('shows an ignored update, a repeat whose first arrival is gone, and null for the unknown', async () => {
    await enqueue(5, []);
    expect(await reader.trace(BOT, 5)).toMatchObject({ status: 'ignored', deliveries: [] });
    expect(await reader.trace(BOT, 6)).toBeNull();
    expect(await reader.trace('other-bot', 5)).toBeNull();
    await f.redis.del(f.ctx.keys.updateLog(BOT));
    await enqueue(5, []);
    await enqueue(5, []);
    const trace = await reader.trace(BOT, 5);
    expect(trace).toMatchObject({ status: 'duplicate', deliveries: [] });
    expect(trace!.duplicatesAt).toHaveLength(1);
  });

  it('finds an update behind more entries than one read returns', async () => {
    await enqueue(1, []);
    for (let id = 2; id < 1_200; id++) await enqueue(id, []);
    expect(await reader.trace(BOT, 1)).toMatchObject({ status: 'ignored' });
  });

  it('lists a route attempts newest first, by status class, a page at a time', async () => {
    await enqueue(1, ['shop']);
    const statuses = [503, 500, 429, 503];
    for (const status of statuses) {
      await f.driver.finishOne('shop', () => retry(status, Date.now() - 1));
    }
    await f.driver.finishOne('shop', () => ({
      kind: 'delivered',
      record: { status: 200, error: null, durationMs: 1 },
    }));
    const all = await reader.attempts('shop');
    expect(all.attempts.map((a) => a.status)).toEqual([200, 503, 429, 500, 503]);
    expect(all.nextCursor).toBeNull();

    const first = await reader.attempts('shop', { status: 'failed', limit: 2 });
    expect(first.attempts.map((a) => a.status)).toEqual([503, 429]);
    expect(first.nextCursor).toBe(first.attempts[1].id);
    const second = await reader.attempts('shop', {
      status: 'failed',
      limit: 2,
      cursor: first.nextCursor!,
    });
    expect(second.attempts.map((a) => a.status)).toEqual([500, 503]);
    expect(second.nextCursor).toBeNull();

    expect((await reader.attempts('shop', { status: '4xx' })).attempts).toHaveLength(1);
    expect((await reader.attempts('shop', { status: '2xx' })).attempts).toHaveLength(1);
    expect((await reader.attempts('shop', { status: 'error' })).attempts).toHaveLength(0);
    const middle = all.attempts[2].at;
    const since = await reader.attempts('shop', { since: middle });
    expect(since.attempts.every((a) => a.at >= middle)).toBe(true);
    const until = await reader.attempts('shop', { until: middle });
    expect(until.attempts.every((a) => a.at < middle)).toBe(true);
    expect(since.attempts.length + until.attempts.length).toBe(5);
    expect(attemptView(all.attempts[0])).toMatchObject({ route: 'shop', status: 200, body: '' });
    expect((await reader.attempts('nowhere')).attempts).toEqual([]);
  });

  it('returns nothing older than max_age, trimmed yet or not', async () => {
    await enqueue(1, ['shop']);
    await f.driver.finishOne('shop', () => retry(503, Date.now() - 1));
    f.ctx.deliveryLog.set({ ...DELIVERY_LOG_DEFAULTS, maxAgeMs: 200 });
    await sleep(250);
    expect(await reader.trace(BOT, 1)).toBeNull();
    expect((await reader.attempts('shop')).attempts).toEqual([]);
  });
});
