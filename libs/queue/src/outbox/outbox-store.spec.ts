import { randomUUID } from 'node:crypto';
import { OUTBOX_RECORD_TTL_MS, OUTBOX_ROUTE } from '@relaygram/contracts';
import { decodeEntry } from '../lanes/delivery-entry';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { outboxChatOf, outboxLane, type OutboxSend } from './outbox-store';

const send = (chatId: number | string, text: string, id: string = randomUUID()): OutboxSend => ({
  bot: 'bot-a',
  client: 'shop',
  id,
  call: { method: 'sendMessage', params: { chat_id: chatId, text } },
  chatId,
});

describe('OutboxStore', () => {
  let f: QueueFixture;

  beforeEach(async () => {
    f = await createQueueFixture('outbox');
  });
  afterEach(() => f.cleanup());

  it('makes a send durable: its record, its entry in the chat lane, and a drain job', async () => {
    const first = send(42, 'hello', 'a1');
    expect(await f.outbox.enqueue(first, 1_000)).toBe('queued');

    const record = await f.outbox.read('bot-a', 'a1');
    expect(record).toEqual({
      id: 'a1',
      bot: 'bot-a',
      status: 'queued',
      client: 'shop',
      method: 'sendMessage',
      chat: '42',
      createdAt: 1_000,
      updatedAt: 1_000,
      attempts: 0,
    });
    const ttl = await f.redis.pttl(f.ctx.keys.outboxSend('bot-a', 'a1'));
    expect(ttl).toBeGreaterThan(OUTBOX_RECORD_TTL_MS - 60_000);

    const lane = outboxLane('bot-a', 42);
    expect(lane).toBe(`${OUTBOX_ROUTE}.bot-a.c42`);
    const [raw] = await f.redis.lrangeBuffer(f.ctx.keys.lane(lane), 0, -1);
    const entry = decodeEntry(raw);
    expect(entry).toMatchObject({ deliveryId: 'a1', bot: 'bot-a', route: OUTBOX_ROUTE });
    expect(JSON.parse(entry.body.toString())).toEqual(first.call);

    // The engine hands the lane to a drain job of the outbox route, as for any route.
    const head = await f.driver.finishOne(OUTBOX_ROUTE, () => ({ kind: 'delivered' }));
    expect(head.entry.deliveryId).toBe('a1');
    expect(await f.redis.llen(f.ctx.keys.lane(lane))).toBe(0);
  });

  it('keeps sends to one chat in their order, and chats apart', async () => {
    await f.outbox.enqueue(send(7, 'one'));
    await f.outbox.enqueue(send('@news', 'for the channel'));
    await f.outbox.enqueue(send(7, 'two'));
    const texts = async (chat: number | string) =>
      (await f.redis.lrangeBuffer(f.ctx.keys.lane(outboxLane('bot-a', chat)), 0, -1)).map(
        (raw) => JSON.parse(decodeEntry(raw).body.toString()).params.text,
      );
    expect(await texts(7)).toEqual(['one', 'two']);
    expect(await texts('@news')).toEqual(['for the channel']);
  });

  it('changes nothing for an id already taken', async () => {
    expect(await f.outbox.enqueue(send(1, 'first', 'same'))).toBe('queued');
    expect(await f.outbox.enqueue(send(1, 'second', 'same'))).toBe('exists');
    expect(await f.redis.llen(f.ctx.keys.lane(outboxLane('bot-a', 1)))).toBe(1);
  });

  it('refuses a key of the wrong type before writing anything', async () => {
    await f.redis.set(f.ctx.keys.lane(outboxLane('bot-a', 9)), 'not a list');
    await expect(f.outbox.enqueue(send(9, 'x', 'w1'))).rejects.toThrow(
      /WRONGTYPE relaygram outbox/,
    );
    expect(await f.outbox.read('bot-a', 'w1')).toBeUndefined();
  });

  it('records how attempts ended, and drops what no longer applies', async () => {
    await f.outbox.enqueue(send(5, 'x', 's1'), 1_000);
    await f.outbox.settle(
      'bot-a',
      's1',
      { status: 'queued', attempts: 1, lastError: '502 Bad Gateway', nextAttemptAt: 3_000 },
      2_000,
    );
    expect(await f.outbox.read('bot-a', 's1')).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: '502 Bad Gateway',
      nextAttemptAt: 3_000,
      updatedAt: 2_000,
    });
    await f.outbox.settle(
      'bot-a',
      's1',
      { status: 'sent', attempts: 2, result: '{"message_id":3}', migratedTo: '-1009' },
      4_000,
    );
    const sent = await f.outbox.read('bot-a', 's1');
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, result: '{"message_id":3}' });
    expect(sent?.migratedTo).toBe('-1009');
    expect(sent?.lastError).toBeUndefined();
    expect(sent?.nextAttemptAt).toBeUndefined();

    await f.outbox.enqueue(send(5, 'y', 'f1'));
    await f.outbox.settle('bot-a', 'f1', {
      status: 'failed',
      attempts: 1,
      errorCode: 403,
      description: 'Forbidden: bot was blocked by the user',
    });
    expect(await f.outbox.read('bot-a', 'f1')).toMatchObject({
      status: 'failed',
      errorCode: 403,
      description: 'Forbidden: bot was blocked by the user',
    });
    expect(await f.outbox.read('bot-a', 'unknown')).toBeUndefined();
    expect(await f.outbox.read('bot-b', 's1')).toBeUndefined();
  });

  it('reads the chat of a stored send', () => {
    const body = (params: unknown) =>
      Buffer.from(JSON.stringify({ method: 'sendMessage', params }));
    expect(outboxChatOf(body({ chat_id: -100123 }))).toBe(-100123);
    expect(outboxChatOf(body({ chat_id: '@news' }))).toBe('@news');
    expect(outboxChatOf(body({ chat_id: '' }))).toBeUndefined();
    expect(outboxChatOf(body({ chat_id: 1.5 }))).toBeUndefined();
    expect(outboxChatOf(body({}))).toBeUndefined();
    expect(outboxChatOf(Buffer.from('not json'))).toBeUndefined();
  });
});
