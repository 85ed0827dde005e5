import { randomUUID } from 'node:crypto';
import { DeadReason, OUTBOX_ROUTE } from '@relaygram/contracts';
import type { RunningApp } from '@relaygram/platform';
import type { OutboxRecord } from '@relaygram/queue';
import { TelegramEmulator, eventually } from '@relaygram/testing';
import { request } from 'undici';
import { DispatcherHarness } from './support/dispatcher-harness';

describe('dispatcher: outbox sends', () => {
  let h: DispatcherHarness;
  let emulator: TelegramEmulator;
  let token: string;
  let app: RunningApp;

  beforeAll(async () => {
    h = await DispatcherHarness.create('outbox');
    token = h.bots['bot-a'];
    emulator = await TelegramEmulator.start();
    emulator.addBot({ token, username: 'outbox_test_bot' });
    // The one configured route is never used: outbox sends need no route.
    h.writeConfig(
      `
routes:
  - name: unused
    target_url: http://127.0.0.1:9/unused
`,
      { apiBase: emulator.apiRoot },
    );
    app = await h.start();
  });

  afterAll(async () => {
    await h.cleanup();
    await emulator.stop();
  });

  /** Hands a sendMessage to the outbox, as the gateway does; its id. */
  async function send(chatId: number | string, text: string): Promise<string> {
    const id = randomUUID();
    const outcome = await h.fixture.outbox.enqueue({
      bot: 'bot-a',
      client: 'shop',
      id,
      call: { method: 'sendMessage', params: { chat_id: chatId, text } },
      chatId,
    });
    expect(outcome).toBe('queued');
    return id;
  }

  async function settled(id: string, status: OutboxRecord['status']): Promise<OutboxRecord> {
    let record: OutboxRecord | undefined;
    await eventually(
      async () => (record = await h.fixture.outbox.read('bot-a', id))?.status === status,
      { what: `outbox send ${id} ${status}`, timeoutMs: 20_000 },
    );
    return record!;
  }

  const sentTexts = (chatId: number | string) =>
    emulator
      .calls(token, { method: 'sendMessage' })
      .filter((call) => call.params.chat_id === chatId && call.status === 200)
      .map((call) => call.params.text);

  it('sends each chat its messages in order, and records what Telegram answered', async () => {
    const chats = [101, 102, 103, 104];
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++)
      for (const chat of chats) ids.push(await send(chat, `${chat}/${i}`));

    for (const id of ids) {
      const record = await settled(id, 'sent');
      expect(record.attempts).toBe(1);
      expect(JSON.parse(record.result!)).toMatchObject({ message_id: expect.any(Number) });
    }
    for (const chat of chats) expect(sentTexts(chat)).toEqual([1, 2, 3].map((i) => `${chat}/${i}`));
    const metrics = await (await request(`${app.adminUrl}/metrics`)).body.text();
    expect(metrics).toMatch(
      new RegExp(
        `relaygram_deliveries_total\\{route="${OUTBOX_ROUTE}",outcome="delivered"[^}]*\\} 12\n`,
      ),
    );
  });

  it('ends a send Telegram refuses as failed, with its error, and goes on with the chat', async () => {
    emulator.failBlockedByUser(token, 'sendMessage', 1);
    const blocked = await send(201, 'blocked');
    const next = await send(201, 'after');

    const failed = await settled(blocked, 'failed');
    expect(failed).toMatchObject({
      errorCode: 403,
      description: 'Forbidden: bot was blocked by the user',
      attempts: 1,
    });
    await settled(next, 'sent');
    expect(sentTexts(201)).toEqual(['after']);
    // A dead letter of the outbox route: listed with the others, and it can be re-sent.
    const letter = await h.fixture.dead.get(blocked);
    expect(letter).toMatchObject({
      route: OUTBOX_ROUTE,
      bot: 'bot-a',
      reason: DeadReason.Rejected,
    });
  });

  it("waits a 429's retry_after, and retries 5xx and dropped connections, in order", async () => {
    emulator.failTooManyRequests(token, 1, 'sendMessage', 1);
    emulator.fail(token, {
      method: 'sendMessage',
      error: { code: 502, description: 'Bad Gateway' },
    });
    emulator.fail(token, { method: 'sendMessage', drop: true });
    const first = await send(301, 'first');
    const second = await send(301, 'second');

    const sent = await settled(first, 'sent');
    expect(sent.attempts).toBe(4);
    await settled(second, 'sent');
    expect(sentTexts(301)).toEqual(['first', 'second']);
    const retried = h.logs.filter(
      (l) => l.msg === 'outbox send not made, will retry' && l.outbox_id === first,
    );
    expect(retried.map((l) => l.error)).toEqual([
      '429 Too Many Requests: retry after 1',
      '502 Bad Gateway',
      'Telegram unreachable',
    ]);
    expect(retried[0].retry_in_ms).toBeGreaterThanOrEqual(1_000);
  });

  it('follows a group that became a supergroup, once, and says where the send went', async () => {
    emulator.fail(token, {
      method: 'sendMessage',
      error: {
        code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        migrateToChatId: -1_001_234,
      },
    });
    const id = await send(-401, 'to the group');
    const record = await settled(id, 'sent');
    expect(record.migratedTo).toBe('-1001234');
    expect(record.attempts).toBe(1);
    expect(sentTexts(-1_001_234)).toEqual(['to the group']);
  });

  it('never writes the bot token into a log line or a record', async () => {
    const id = await send(501, 'secret check');
    await settled(id, 'sent');
    const raw = await h.fixture.redis.hgetall(h.fixture.ctx.keys.outboxSend('bot-a', id));
    expect(JSON.stringify(raw)).not.toContain(token);
    expect(JSON.stringify(h.logs)).not.toContain(token);
  });

  it('shows a send that waits on a 429 as queued, with why and when it goes next', async () => {
    emulator.failTooManyRequests(token, 30, 'sendMessage', 1);
    const id = await send(601, 'later');
    let record: OutboxRecord | undefined;
    await eventually(
      async () => ((record = await h.fixture.outbox.read('bot-a', id))?.attempts ?? 0) === 1,
      { what: 'the first attempt recorded' },
    );
    expect(record).toMatchObject({
      status: 'queued',
      lastError: '429 Too Many Requests: retry after 30',
    });
    expect(record!.nextAttemptAt! - record!.updatedAt).toBeGreaterThanOrEqual(29_000);
    expect(sentTexts(601)).toEqual([]);
  });
});
