import { randomBytes } from 'node:crypto';
import { createRelaygramClient, type RelaygramClient } from '@relaygram/client';
import { TelegramEmulator, type BotIdentity } from '@relaygram/testing';
import { bootGateway, type GatewayApp } from './support/gateway-app';

/** A service using the generated client, as an integrating team would, against the real app. */
describe('@relaygram/client against the gateway', () => {
  let emulator: TelegramEmulator;
  let bot: BotIdentity;
  let app: GatewayApp;
  let relaygram: RelaygramClient;
  const token = randomBytes(24).toString('base64url');

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    bot = emulator.addBot();
    app = await bootGateway(
      'gw-client',
      {
        bots: [{ id: 'shop-bot', token_env: 'CLIENT_BOT_TOKEN', mode: 'polling', default: true }],
        routes: [],
        clients: [{ name: 'shop', token_env: 'CLIENT_TOKEN', bots: ['shop-bot'] }],
      },
      { TELEGRAM_API_BASE: emulator.apiRoot, CLIENT_BOT_TOKEN: bot.token, CLIENT_TOKEN: token },
    );
    relaygram = createRelaygramClient({ baseUrl: app.running.url, serviceToken: token });
  });
  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  it('sends a message and reads Telegram result with its documented type', async () => {
    const { data, error, response } = await relaygram.POST('/api/v1/{botId}/messages/send', {
      params: { path: { botId: 'shop-bot' } },
      body: { chat_id: 501, text: 'sent with the client', options: { parse_mode: 'HTML' } },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data?.chat.id).toBe(501);
    const [call] = await emulator.waitForCalls(bot.id, { method: 'sendMessage' });
    expect(call.params).toMatchObject({ chat_id: 501, text: 'sent with the client' });
    expect(emulator.storedMessage(bot.id, 501, data?.message_id ?? -1)?.text).toBe(
      'sent with the client',
    );
  });

  it('uses the default bot and sends the Idempotency-Key header', async () => {
    const call = () =>
      relaygram.POST('/api/v1/messages/send', {
        params: { header: { 'idempotency-key': 'client-test-1' } },
        body: { chat_id: 502, text: 'once' },
      });
    const first = await call();
    const again = await call();
    expect(again.data?.message_id).toBe(first.data?.message_id);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers a refused call as the documented error body', async () => {
    const stranger = createRelaygramClient({ baseUrl: app.running.url, serviceToken: 'nope' });
    const { data, error, response } = await stranger.POST('/api/v1/{botId}/chat-actions/send', {
      params: { path: { botId: 'shop-bot' } },
      body: { chat_id: 501, action: 'typing' },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(error).toEqual({ error: 'unauthorized' });
  });
});
