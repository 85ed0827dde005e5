import { randomBytes } from 'node:crypto';
import type { RunningApp } from '@relaygram/platform';
import {
  captureLogs,
  TelegramEmulator,
  type BotIdentity,
  expectDocumentedAnswer,
} from '@relaygram/testing';
import { request } from 'undici';
import { bootGateway, type GatewayApp } from './support/gateway-app';

/** The gateway app as `npm run start:gateway` runs it, against the emulator. */
describe('gateway app serving the gateway', () => {
  let emulator: TelegramEmulator;
  let bot: BotIdentity;
  let running: RunningApp;
  let app: GatewayApp;
  const client = randomBytes(24).toString('base64url');
  const logs = captureLogs();

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    bot = emulator.addBot();
    app = await bootGateway(
      'gw-app',
      {
        telegram: { api_base: 'https://api.telegram.org' },
        bots: [
          {
            id: 'shop-bot',
            token_env: 'GW_APP_BOT_TOKEN',
            mode: 'webhook',
            webhook: {
              url: 'https://relay.example.com/webhooks/telegram/shop-bot',
              secret_token_env: 'GW_APP_WEBHOOK_SECRET',
              manage: false,
            },
          },
        ],
        routes: [],
        clients: [{ name: 'site', token_env: 'GW_APP_CLIENT_TOKEN', bots: ['shop-bot'] }],
      },
      {
        // TELEGRAM_API_BASE points the whole app at the emulator, as in the demo.
        TELEGRAM_API_BASE: emulator.apiRoot,
        GW_APP_BOT_TOKEN: bot.token,
        GW_APP_WEBHOOK_SECRET: 'webhook-secret-0123456789',
        GW_APP_CLIENT_TOKEN: client,
        LOG_LEVEL: 'debug',
      },
      logs.stream,
    );
    running = app.running;
  });
  afterAll(async () => {
    await app?.close();
    await emulator.stop();
  });

  it('sends through the REST API with the default bot', async () => {
    const res = await request(`${running.url}/api/v1/messages/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-token': client },
      body: JSON.stringify({ chat_id: 7, text: 'from the app' }),
    });
    expect(res.statusCode).toBe(200);
    const body = await res.body.json();
    expect(body).toMatchObject({ chat: { id: 7 }, text: 'from the app' });
    await expectDocumentedAnswer({
      method: 'POST',
      url: `${running.url}/api/v1/messages/send`,
      status: res.statusCode,
      contentType: String(res.headers['content-type']),
      body,
    });
  });

  it('serves the drop-in', async () => {
    const res = await request(`${running.url}/bot${bot.id}:${client}/getMe`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ ok: true, result: { id: bot.id } });
  });

  it('counts Telegram calls by bot, method and code on /metrics', async () => {
    const res = await request(`${running.adminUrl}/metrics`);
    const text = await res.body.text();
    expect(text).toMatch(
      /relaygram_telegram_api_calls_total\{[^}]*bot="shop-bot"[^}]*method="sendMessage"[^}]*code="200"[^}]*\} 1/,
    );
  });

  it('reports the bot reachable and the clients count on /healthz', async () => {
    const deadline = Date.now() + 10_000;
    let body: Record<string, unknown> = {};
    for (;;) {
      const res = await request(`${running.url}/healthz`);
      body = (await res.body.json()) as Record<string, unknown>;
      if (res.statusCode === 200 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(body).toMatchObject({
      service: 'gateway',
      clients: 1,
      bots: [expect.objectContaining({ id: 'shop-bot', telegram_reachable: true })],
    });
  });

  it('names the request id in its call lines, with no per-request context', async () => {
    const rest = await request(`${running.url}/api/v1/messages/send`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-token': client,
        'x-request-id': 'gw-rest-1',
      },
      body: JSON.stringify({ chat_id: 7, text: 'traced' }),
    });
    await rest.body.dump();
    const dropIn = await request(`${running.url}/bot${bot.id}:${client}/getMe`, {
      headers: { 'x-request-id': 'gw-drop-in-1' },
    });
    await dropIn.body.dump();
    const lines = logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'gateway call', req_id: 'gw-rest-1', status: 200 }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'drop-in call',
        req_id: 'gw-drop-in-1',
        path: `/bot${bot.id}:***/getMe`,
      }),
    );
  });
});
