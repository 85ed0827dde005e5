import {
  BROADCAST_LOADING_TTL_MS,
  BROADCAST_MAX_RECIPIENTS,
  BROADCAST_RECORD_TTL_MS,
} from '@relaygram/contracts';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import type { BroadcastStore } from './broadcast-store';
import { broadcastView } from './broadcast-view';

const CALL = { method: 'sendMessage', params: { text: 'sale' } };
const ids = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => String(from + i));

async function started(store: BroadcastStore, id: string, chats: string[], now = 1_000) {
  expect(await store.create({ bot: 'bot-a', client: 'shop', id, upload: 'u' }, now)).toBe(
    'created',
  );
  for (let i = 0; i < chats.length; i += 1_000) {
    await store.append('bot-a', id, 'u', chats.slice(i, i + 1_000));
  }
  expect(await store.start('bot-a', id, 'u', CALL, now)).toBe('running');
}

describe('BroadcastStore', () => {
  let f: QueueFixture;

  beforeEach(async () => {
    f = await createQueueFixture('broadcast');
  });
  afterEach(() => f.cleanup());

  it('loads recipients in chunks, in order, and starts with its call', async () => {
    const store = f.broadcasts;
    expect(await store.create({ bot: 'bot-a', client: 'shop', id: 'b1', upload: 'u' }, 500)).toBe(
      'created',
    );
    expect(await f.redis.pttl(f.ctx.keys.broadcast('bot-a', 'b1'))).toBeGreaterThan(
      BROADCAST_LOADING_TTL_MS - 60_000,
    );
    expect(await store.append('bot-a', 'b1', 'u', ids(100, 1_000), 500)).toBe(1_000);
    expect(await store.append('bot-a', 'b1', 'u', ['@news', '-100200'], 500)).toBe(1_002);
    // A second create of the id changes nothing and says what is there.
    expect(await store.create({ bot: 'bot-a', client: 'other', id: 'b1', upload: 'u' }, 600)).toBe(
      'loading',
    );
    expect(await store.claim('bot-a', 'b1', 10)).toEqual({ status: 'loading' });

    expect(await store.start('bot-a', 'b1', 'u', CALL, 2_000)).toBe('running');
    expect(await store.start('bot-a', 'b1', 'u', CALL)).toBe('running');
    expect(await f.redis.pttl(f.ctx.keys.broadcast('bot-a', 'b1'))).toBe(-1);
    expect(await f.redis.pttl(f.ctx.keys.broadcastRecipients('bot-a', 'b1'))).toBe(-1);
    expect(await store.running()).toEqual([{ bot: 'bot-a', id: 'b1' }]);
    await expect(store.append('bot-a', 'b1', 'u', ['1'])).rejects.toThrow(/not loading/);

    const record = await store.read('bot-a', 'b1');
    expect(record).toMatchObject({
      status: 'running',
      client: 'shop',
      method: 'sendMessage',
      total: 1_002,
      createdAt: 500,
      startedAt: 2_000,
      runSince: 2_000,
    });
    const list = await f.redis.lrange(f.ctx.keys.broadcastRecipients('bot-a', 'b1'), 0, -1);
    expect(list).toEqual([...ids(100, 1_000), '@news', '-100200']);
  });

  it('starts afresh a loading broadcast whose upload went quiet', async () => {
    const store = f.broadcasts;
    await store.create({ bot: 'bot-a', client: 'shop', id: 'b7', upload: 'u' }, 1_000);
    await store.append('bot-a', 'b7', 'u', ['1', '2'], 5_000);
    expect(
      await store.create({ bot: 'bot-a', client: 'shop', id: 'b7', upload: 'u' }, 34_999),
    ).toBe('loading');
    expect(
      await store.create({ bot: 'bot-a', client: 'shop', id: 'b7', upload: 'u' }, 35_000),
    ).toBe('created');
    expect(await f.redis.exists(f.ctx.keys.broadcastRecipients('bot-a', 'b7'))).toBe(0);
    expect(await store.read('bot-a', 'b7')).toMatchObject({ total: 0, createdAt: 35_000 });
    // The quiet upload's request cannot add to the new one, nor start it.
    await expect(store.append('bot-a', 'b7', 'old', ['9'], 35_001)).rejects.toThrow(/afresh/);
    expect(await store.start('bot-a', 'b7', 'old', CALL, 35_001)).toBe('replaced');
    await store.discard('bot-a', 'b7', 'old');
    expect(await store.read('bot-a', 'b7')).toMatchObject({ status: 'loading' });
    // A started one is never replaced.
    await store.append('bot-a', 'b7', 'u', ['3'], 35_000);
    await store.start('bot-a', 'b7', 'u', CALL, 36_000);
    expect(
      await store.create({ bot: 'bot-a', client: 'shop', id: 'b7', upload: 'u' }, 999_999),
    ).toBe('running');
    // The quiet request, back after the new one started, learns its upload was replaced.
    expect(await store.start('bot-a', 'b7', 'old', CALL, 40_000)).toBe('replaced');
    expect(await store.start('bot-a', 'b7', 'u', CALL, 40_000)).toBe('running');
  });

  it('refuses more recipients than a broadcast may have', async () => {
    const store = f.broadcasts;
    await store.create({ bot: 'bot-a', client: 'shop', id: 'big', upload: 'u' });
    // The list's length is what counts: fill it directly, then one chunk too many.
    const key = f.ctx.keys.broadcastRecipients('bot-a', 'big');
    const filler = ids(0, 10_000);
    for (let n = 0; n < BROADCAST_MAX_RECIPIENTS; n += filler.length) {
      await f.redis.rpush(key, ...filler);
    }
    await expect(store.append('bot-a', 'big', 'u', ['1'])).rejects.toThrow(/more than 1000000/);
    expect(await f.redis.llen(key)).toBe(BROADCAST_MAX_RECIPIENTS);
  });

  it('claims each recipient once, leases them, and ends done when all are settled', async () => {
    const store = f.broadcasts;
    await started(store, 'b2', ids(1, 5));
    const first = await store.claim('bot-a', 'b2', 3, 10_000, 60_000);
    expect(first).toEqual({
      status: 'running',
      call: CALL,
      recipients: [
        { index: 0, chatId: '1', tries: 0 },
        { index: 1, chatId: '2', tries: 0 },
        { index: 2, chatId: '3', tries: 0 },
      ],
    });
    const second = await store.claim('bot-a', 'b2', 10, 10_000, 60_000);
    expect(second.status === 'running' && second.recipients.map((r) => r.chatId)).toEqual([
      '4',
      '5',
    ]);
    // Nothing left to claim while every lease runs.
    expect(await store.claim('bot-a', 'b2', 10, 20_000, 60_000)).toMatchObject({ recipients: [] });

    const counted = await store.settle(
      'bot-a',
      'b2',
      [
        { index: 0, outcome: 'sent' },
        {
          index: 1,
          outcome: 'blocked',
          chatId: '2',
          errorCode: 403,
          description: 'Forbidden: bot was blocked by the user',
        },
        {
          index: 2,
          outcome: 'failed',
          chatId: '3',
          errorCode: 400,
          description: 'Bad Request: chat not found',
        },
        { index: 3, outcome: 'sent' },
        // Twice in one batch: counted once.
        { index: 3, outcome: 'sent' },
      ],
      30_000,
    );
    expect(counted).toBe(4);
    expect(await store.read('bot-a', 'b2')).toMatchObject({
      status: 'running',
      sent: 2,
      blocked: 1,
      failed: 1,
    });

    await store.settle('bot-a', 'b2', [{ index: 4, outcome: 'sent' }], 40_000);
    const done = await store.read('bot-a', 'b2');
    expect(done).toMatchObject({ status: 'done', sent: 3, finishedAt: 40_000, runMs: 39_000 });
    expect(done?.runSince).toBeUndefined();
    expect(await store.running()).toEqual([]);
    expect(await f.redis.pttl(f.ctx.keys.broadcast('bot-a', 'b2'))).toBeGreaterThan(
      BROADCAST_RECORD_TTL_MS - 60_000,
    );
    expect(await store.failures('bot-a', 'b2', 'blocked', 0, 10)).toEqual({
      total: 1,
      items: [
        { chat_id: '2', error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      ],
    });
    expect((await store.failures('bot-a', 'b2', 'failed', 0, 10)).items[0].chat_id).toBe('3');
    expect(await store.claim('bot-a', 'b2', 10)).toEqual({ status: 'done' });
  });

  it('claims again a recipient whose lease ran out, and counts its result once', async () => {
    const store = f.broadcasts;
    await started(store, 'b3', ids(1, 2));
    await store.claim('bot-a', 'b3', 2, 10_000, 5_000);
    // The first process died: its leases run out and another process claims them.
    const again = await store.claim('bot-a', 'b3', 10, 15_001, 5_000);
    expect(again.status === 'running' && again.recipients.map((r) => r.index)).toEqual([0, 1]);
    expect(await store.settle('bot-a', 'b3', [{ index: 0, outcome: 'sent' }], 16_000)).toBe(1);
    // The first process's late answer for the same recipient is not counted again.
    expect(await store.settle('bot-a', 'b3', [{ index: 0, outcome: 'sent' }], 16_500)).toBe(0);
    expect(await store.read('bot-a', 'b3')).toMatchObject({ sent: 1, status: 'running' });
  });

  it('retries a recipient when due, counting its tries, and hands back released ones at once', async () => {
    const store = f.broadcasts;
    await started(store, 'b4', ids(1, 2));
    await store.claim('bot-a', 'b4', 2, 10_000, 60_000);
    await store.settle(
      'bot-a',
      'b4',
      [
        { index: 0, outcome: 'retry', dueAt: 13_000 },
        { index: 1, outcome: 'release' },
      ],
      11_000,
    );
    // A wait (a 429) is due like a retry but counts no try.
    await store.settle('bot-a', 'b4', [{ index: 0, outcome: 'wait', dueAt: 13_000 }], 11_500);
    const now = await store.claim('bot-a', 'b4', 10, 12_000, 60_000);
    expect(now.status === 'running' && now.recipients).toEqual([
      { index: 1, chatId: '2', tries: 0 },
    ]);
    const due = await store.claim('bot-a', 'b4', 10, 13_000, 60_000);
    expect(due.status === 'running' && due.recipients).toEqual([
      { index: 0, chatId: '1', tries: 1 },
    ]);
    await store.settle(
      'bot-a',
      'b4',
      [
        { index: 0, outcome: 'sent' },
        { index: 1, outcome: 'sent' },
      ],
      14_000,
    );
    expect(await f.redis.exists(f.ctx.keys.broadcastTries('bot-a', 'b4'))).toBe(0);
    expect(await store.read('bot-a', 'b4')).toMatchObject({ status: 'done', sent: 2 });
  });

  it('pauses, resumes and cancels, refusing what the status does not allow', async () => {
    const store = f.broadcasts;
    await started(store, 'b5', ids(1, 4), 1_000);
    await store.claim('bot-a', 'b5', 1, 2_000, 60_000);
    expect(await store.control('bot-a', 'b5', 'resume', 3_000)).toEqual({
      ok: false,
      status: 'running',
    });
    expect(await store.control('bot-a', 'b5', 'pause', 3_000)).toEqual({
      ok: true,
      status: 'paused',
    });
    expect(await store.running()).toEqual([]);
    expect(await store.claim('bot-a', 'b5', 10, 3_500)).toEqual({ status: 'paused' });
    // A send in flight at the pause still counts.
    expect(await store.settle('bot-a', 'b5', [{ index: 0, outcome: 'sent' }], 4_000)).toBe(1);
    expect(await store.control('bot-a', 'b5', 'resume', 10_000)).toEqual({
      ok: true,
      status: 'running',
    });
    const resumed = await store.claim('bot-a', 'b5', 1, 10_500, 60_000);
    expect(resumed.status === 'running' && resumed.recipients[0].index).toBe(1);
    expect(await store.control('bot-a', 'b5', 'cancel', 12_000)).toEqual({
      ok: true,
      status: 'cancelled',
    });
    expect(await store.control('bot-a', 'b5', 'pause', 12_000)).toEqual({
      ok: false,
      status: 'cancelled',
    });
    expect(await store.control('bot-a', 'nope', 'pause')).toEqual({ ok: false, status: 'missing' });

    const record = await store.read('bot-a', 'b5');
    // Running 1-3 s and 10-12 s: the pause is left out of its time.
    expect(record).toMatchObject({
      status: 'cancelled',
      sent: 1,
      runMs: 4_000,
      finishedAt: 12_000,
    });
    const view = broadcastView(record!, 12_000);
    expect(view).toMatchObject({ status: 'cancelled', pending: 3, rate: 0.3 });
    expect(view.estimated_finish_at).toBeUndefined();
    expect(await f.redis.pttl(f.ctx.keys.broadcastRecipients('bot-a', 'b5'))).toBeGreaterThan(0);
  });

  it("keeps a dispatcher's reason with its pause, and drops it on resume and cancel", async () => {
    const store = f.broadcasts;
    await started(store, 'b9', ids(1, 3), 1_000);
    const why = "Telegram refused the bot's token (401 Unauthorized)";
    expect(await store.control('bot-a', 'b9', 'pause', 2_000, why)).toEqual({
      ok: true,
      status: 'paused',
    });
    expect((await store.read('bot-a', 'b9'))?.pausedReason).toBe(why);
    expect(broadcastView((await store.read('bot-a', 'b9'))!, 2_000).paused_reason).toBe(why);
    // A second pause (already paused) changes nothing, its reason included.
    expect(await store.control('bot-a', 'b9', 'pause', 2_500, 'other')).toEqual({
      ok: false,
      status: 'paused',
    });
    expect((await store.read('bot-a', 'b9'))?.pausedReason).toBe(why);
    await store.control('bot-a', 'b9', 'resume', 3_000);
    const resumed = await store.read('bot-a', 'b9');
    expect(resumed?.pausedReason).toBeUndefined();
    expect(broadcastView(resumed!, 3_000).paused_reason).toBeUndefined();
    // An operator's pause has no reason; a reason given to cancel is not kept.
    await store.control('bot-a', 'b9', 'pause', 4_000);
    expect((await store.read('bot-a', 'b9'))?.pausedReason).toBeUndefined();
    await store.control('bot-a', 'b9', 'resume', 5_000);
    await store.control('bot-a', 'b9', 'pause', 6_000, why);
    await store.control('bot-a', 'b9', 'cancel', 7_000, why);
    const cancelled = await store.read('bot-a', 'b9');
    expect(cancelled).toMatchObject({ status: 'cancelled' });
    expect(cancelled?.pausedReason).toBeUndefined();
  });

  it("lists a bot's broadcasts newest first, pruning those gone", async () => {
    const store = f.broadcasts;
    await started(store, 'old', ids(1, 1), 1_000);
    await started(store, 'new', ids(1, 1), 2_000);
    await started(store, 'gone', ids(1, 1), 3_000);
    await f.redis.del(f.ctx.keys.broadcast('bot-a', 'gone'));
    expect((await store.list('bot-a')).map((r) => r.id)).toEqual(['new', 'old']);
    expect(await f.redis.zrange(f.ctx.keys.broadcasts('bot-a'), 0, -1)).toEqual(['old', 'new']);
  });

  it('estimates the finish of a running broadcast from its rate', async () => {
    const store = f.broadcasts;
    await started(store, 'b6', ids(1, 30), 0);
    await store.claim('bot-a', 'b6', 10, 0, 60_000);
    await store.settle(
      'bot-a',
      'b6',
      ids(0, 10).map((i) => ({ index: Number(i), outcome: 'sent' as const })),
      1_000,
    );
    const view = broadcastView((await store.read('bot-a', 'b6'))!, 2_000);
    expect(view).toMatchObject({ pending: 20, rate: 5 });
    expect(view.estimated_finish_at).toBe(new Date(6_000).toISOString());
  });
});
