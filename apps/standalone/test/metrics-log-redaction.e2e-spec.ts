import type { RunningApp } from '@relaygram/platform';
import {
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  eventually,
  pollingBot,
  webhookBot,
  writeEmulatedConfig,
} from '@relaygram/testing';
import { request } from 'undici';
import {
  bootStandalone,
  captureLogs,
  getJson,
  uniquePrefix,
  type CapturedLogs,
  stopStandalone,
} from './admin-kit';

const ADMIN_TOKEN = 'AdminTokenRedactionTest0123456789abcdef';
const CLIENT_TOKEN = 'ClientTokenRedactionTest0123456789abcdef';
const WEBHOOK_SECRET = 'WebhookSecretRedactionTest0123456789';
const SIGNING_SECRET = 'SigningSecretRedactionTest0123456789';
const SERVICE_TOKEN = 'ServiceTokenRedactionTest0123456789';
const TELEGRAM_SECRET = 'RouteTelegramSecretRedactionTest0123';

/**
 * Every kind of secret passes through a busy standalone process at LOG_LEVEL=trace,
 * including failures (wrong tokens, a refusing target, Telegram errors): none may show
 * up in a log line or in /metrics.
 */
describe('no secret in logs or metrics (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeEmulatedConfig>;
  let app: RunningApp;
  let logs: CapturedLogs;
  let metricsText = '';

  const secrets = (): Record<string, string> => ({
    'sol bot token': sol.token,
    'sol bot token, secret half': sol.token.split(':')[1],
    'shop bot token': shop.token,
    'shop bot token, secret half': shop.token.split(':')[1],
    'client token': CLIENT_TOKEN,
    'webhook secret': WEBHOOK_SECRET,
    'signing secret': SIGNING_SECRET,
    'service token': SERVICE_TOKEN,
    'route Telegram secret': TELEGRAM_SECRET,
    'admin token': ADMIN_TOKEN,
  });

  async function hit(
    url: string,
    init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
  ): Promise<number> {
    const res = await request(url, init);
    await res.body.dump();
    return res.statusCode;
  }

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    sol = emulator.addBot({ username: 'sol_redaction_bot' });
    shop = emulator.addBot({ username: 'shop_redaction_bot' });
    prefix = uniquePrefix('redaction');
    config = writeEmulatedConfig(prefix, emulator.apiRoot, {
      bots: [pollingBot('sol'), webhookBot('shop', 'SHOP_WEBHOOK_SECRET')],
      routes: [
        {
          name: 'site',
          target_url: `${receiver.url}/site`,
          signing_secret_env: 'SITE_SIGNING_SECRET',
          service_token_env: 'SITE_SERVICE_TOKEN',
          telegram_secret_token_env: 'SITE_TELEGRAM_SECRET',
        },
      ],
      clients: [{ name: 'web', token_env: 'WEB_CLIENT_TOKEN', bots: ['sol', 'shop'] }],
    });
    logs = captureLogs();
    app = await bootStandalone(
      config.path,
      {
        LOG_LEVEL: 'trace',
        ADMIN_TOKEN,
        SOL_TOKEN: sol.token,
        SHOP_TOKEN: shop.token,
        SHOP_WEBHOOK_SECRET: WEBHOOK_SECRET,
        SITE_SIGNING_SECRET: SIGNING_SECRET,
        SITE_SERVICE_TOKEN: SERVICE_TOKEN,
        SITE_TELEGRAM_SECRET: TELEGRAM_SECRET,
        WEB_CLIENT_TOKEN: CLIENT_TOKEN,
      },
      logs,
    );

    // Deliveries: one refused (a retry), then delivered; one webhook update.
    receiver.respondNext([{ status: 500, body: 'try again' }]);
    emulator.message(sol.token, { chatId: 7, text: 'hello' });
    const update = {
      update_id: 9100,
      message: { message_id: 1, date: 1, chat: { id: 8, type: 'private' }, text: 'hi' },
    };
    const webhook = `${app.url}/webhooks/telegram/shop`;
    const json = { 'content-type': 'application/json' };
    expect(
      await hit(webhook, {
        method: 'POST',
        headers: { ...json, 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET },
        body: JSON.stringify(update),
      }),
    ).toBe(202);
    expect(
      await hit(webhook, {
        method: 'POST',
        headers: { ...json, 'x-telegram-bot-api-secret-token': `${WEBHOOK_SECRET}-old` },
        body: JSON.stringify({ ...update, update_id: 9101 }),
      }),
    ).toBe(401);

    // The gateway: drop-in with the client token in the path, right and wrong, and REST.
    const numericId = sol.token.split(':')[0];
    expect(await hit(`${app.url}/bot${numericId}:${CLIENT_TOKEN}/getMe`)).toBe(200);
    expect(await hit(`${app.url}/bot${numericId}:${CLIENT_TOKEN}x/getMe`)).toBe(401);
    await hit(`${app.url}/file/bot${numericId}:${CLIENT_TOKEN}/photos/none.jpg`);
    emulator.failUnauthorized(sol.token, 1);
    await hit(`${app.url}/bot${numericId}:${CLIENT_TOKEN}/getChat?chat_id=1`);
    expect(
      await hit(`${app.url}/api/v1/sol/messages/send`, {
        method: 'POST',
        headers: { ...json, 'x-service-token': CLIENT_TOKEN },
        body: JSON.stringify({ chat_id: 7, text: 'reply' }),
      }),
    ).toBe(200);
    expect(
      await hit(`${app.url}/api/v1/sol/messages/send`, {
        method: 'POST',
        headers: { ...json, 'x-service-token': ADMIN_TOKEN },
        body: JSON.stringify({ chat_id: 7, text: 'reply' }),
      }),
    ).toBe(401);

    // The admin API: right and wrong tokens, on both listeners; setWebhook sends the secret.
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    expect(await hit(`${app.adminUrl}/admin/api/bots`, { headers: bearer(ADMIN_TOKEN) })).toBe(200);
    expect(await hit(`${app.adminUrl}/admin/api/bots`, { headers: bearer(CLIENT_TOKEN) })).toBe(
      401,
    );
    expect(await hit(`${app.url}/admin/api/bots`, { headers: bearer(ADMIN_TOKEN) })).toBe(404);
    expect(
      await hit(`${app.adminUrl}/admin/api/bots/shop/webhook`, {
        method: 'POST',
        headers: bearer(ADMIN_TOKEN),
      }),
    ).toBe(200);
    await hit(`${app.adminUrl}/admin/api/bots/sol/webhook`, { headers: bearer(ADMIN_TOKEN) });

    await eventually(
      () => (receiver.deliveries.filter((d) => d.status === 204).length >= 2 ? true : undefined),
      { what: 'both deliveries', retryErrors: true },
    );
    await getJson(`${app.url}/healthz`);
    const res = await request(`${app.adminUrl}/metrics`);
    metricsText = await res.body.text();
  });

  afterAll(() => stopStandalone({ app, receiver, emulator, prefix, config }));

  it('captured the traffic (the checks below look at real lines)', () => {
    const numericId = sol.token.split(':')[0];
    const urls = logs.lines.map((line) => (JSON.parse(line) as { url?: string }).url);
    expect(urls).toContain(`/bot${numericId}:***/getMe`);
    expect(urls).toContain(`/file/bot${numericId}:***/photos/none.jpg`);
    expect(logs.lines.length).toBeGreaterThan(20);
    expect(metricsText).toContain('relaygram_updates_received_total');
    // The targets got the secrets they are meant to get; only the logs must not.
    const delivered = receiver.deliveries[receiver.deliveries.length - 1];
    expect(delivered.headers['x-service-token']).toBe(SERVICE_TOKEN);
  });

  it('has no secret of any kind in any log line', () => {
    for (const [what, secret] of Object.entries(secrets())) {
      const leaks = logs.lines.filter((line) => line.includes(secret));
      expect({ what, leaks }).toEqual({ what, leaks: [] });
    }
  });

  it('has no secret in any metric label or value', () => {
    for (const [what, secret] of Object.entries(secrets())) {
      expect({ what, leaked: metricsText.includes(secret) }).toEqual({ what, leaked: false });
    }
  });
});
