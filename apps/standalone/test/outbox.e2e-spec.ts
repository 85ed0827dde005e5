import { randomBytes } from 'node:crypto';
import type { RunningApp } from '@relaygram/platform';
import { eventually, TelegramEmulator, type BotIdentity } from '@relaygram/testing';
import { request } from 'undici';
import { bootStandalone, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const CLIENT_TOKEN = randomBytes(24).toString('base64url');
const CHATS = Array.from({ length: 20 }, (_, i) => 9_001 + i);
const PER_CHAT = 6;

/**
 * Issue 16, the outbox from end to end in one process: sends posted to the gateway are
 * made by the dispatcher, in order per chat, while the emulator holds the bot to
 * Telegram's flood limits and answers some calls with 429, 502 or a dropped connection.
 */
describe('the outbox (standalone)', () => {
  let emulator: TelegramEmulator;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    shop = emulator.addBot({ username: 'shop_outbox_bot' });
    emulator.setFloodLimits(shop.token, { perSecond: 30, perChatPerSecond: 1, chatBurst: 3 });
    prefix = uniquePrefix('outbox');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'shop', token_env: 'SHOP_TOKEN', mode: 'polling' }],
      routes: [{ name: 'unused', target_url: 'http://127.0.0.1:9/' }],
      clients: [{ name: 'site', token_env: 'SITE_TOKEN', bots: ['shop'] }],
    });
    app = await bootStandalone(config.path, { SHOP_TOKEN: shop.token, SITE_TOKEN: CLIENT_TOKEN });
  });

  afterAll(() => stopStandalone({ app, emulator, prefix, config }));

  async function post(chatId: number, text: string): Promise<string> {
    const res = await request(`${app.url}/api/v1/shop/outbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-token': CLIENT_TOKEN },
      body: JSON.stringify({ method: 'sendMessage', params: { chat_id: chatId, text } }),
    });
    const body = (await res.body.json()) as { id: string; status: string };
    expect(res.statusCode).toBe(202);
    return body.id;
  }

  async function read(id: string): Promise<Record<string, unknown>> {
    const res = await request(`${app.url}/api/v1/shop/outbox/${id}`, {
      headers: { 'x-service-token': CLIENT_TOKEN },
    });
    expect(res.statusCode).toBe(200);
    return (await res.body.json()) as Record<string, unknown>;
  }

  it('sends every chat its messages in order, within the flood limits, through failures', async () => {
    emulator.failTooManyRequests(shop.token, 1, 'sendMessage', 3);
    emulator.failServerError(shop.token, 502, 'sendMessage', 3);
    emulator.fail(shop.token, { method: 'sendMessage', drop: true, times: 3 });

    const ids: string[] = [];
    // All at once, as a burst of notifications would come: far above every chat's 1/s.
    for (let i = 1; i <= PER_CHAT; i++) {
      ids.push(...(await Promise.all(CHATS.map((chat) => post(chat, `${chat}:${i}`)))));
    }

    await eventually(
      async () => {
        const views = await Promise.all(ids.map(read));
        return views.every((view) => view.status === 'sent');
      },
      { what: `${ids.length} outbox sends sent`, timeoutMs: 60_000, intervalMs: 500 },
    );

    const made = emulator
      .calls(shop.token, { method: 'sendMessage' })
      .filter((call) => call.status === 200);
    for (const chat of CHATS) {
      const texts = made.filter((call) => call.params.chat_id === chat).map((c) => c.params.text);
      expect(texts).toEqual(Array.from({ length: PER_CHAT }, (_, i) => `${chat}:${i + 1}`));
    }
    // The bot's pacing kept every chat under Telegram's limits: no flood 429 at all,
    // only the ones forced above. (The emulator counts the dropped calls as let through.)
    const flood = emulator.floodStats(shop.token);
    expect(flood?.limited).toBe(0);
    expect(flood?.accepted).toBeGreaterThanOrEqual(made.length);

    const view = await read(ids[0]);
    expect(view).toMatchObject({
      id: ids[0],
      status: 'sent',
      method: 'sendMessage',
      chat_id: CHATS[0],
      result: { chat: { id: CHATS[0] }, text: `${CHATS[0]}:1` },
    });
  });
});
