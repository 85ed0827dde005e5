import type { RunningApp } from '@relaygram/platform';
import {
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  eventually,
  expectDocumentedAnswer,
  pollingBot,
  webhookBot,
  writeEmulatedConfig,
} from '@relaygram/testing';
import { request } from 'undici';
import {
  bootStandalone,
  getJson,
  metricValue,
  parseMetrics,
  uniquePrefix,
  type Sample,
  stopStandalone,
} from './admin-kit';

const ADMIN_TOKEN = 'metrics-test-admin-token-0123456789';
const SHOP_SECRET = 'shop_webhook_secret_for_metrics';
const CLIENT_TOKEN = 'site-client-token-for-metrics-0123456789';

/**
 * A scripted run through the whole standalone process (emulator → ingress → lanes →
 * dispatcher → receiver, the gateway, the admin API), then a scrape: every counter
 * equals what the script made happen.
 */
describe('/metrics after a scripted run (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeEmulatedConfig>;
  let app: RunningApp;

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const at = (path: string) => receiver.deliveries.filter((d) => d.path === path);

  async function scrape(): Promise<Sample[]> {
    const res = await request(`${app.adminUrl}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.body.text());
  }

  async function webhook(update: object, secret = SHOP_SECRET): Promise<number> {
    const res = await request(`${app.url}/webhooks/telegram/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
      body: JSON.stringify(update),
    });
    await res.body.dump();
    return res.statusCode;
  }

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith((delivery) =>
      delivery.path === '/admin-hook' && at('/admin-hook').length <= 1
        ? { status: 400, body: { error: 'not today' } }
        : { status: 204 },
    );
    sol = emulator.addBot({ username: 'sol_metrics_bot' });
    shop = emulator.addBot({ username: 'shop_metrics_bot' });
    prefix = uniquePrefix('metrics');
    config = writeEmulatedConfig(prefix, emulator.apiRoot, {
      bots: [pollingBot('sol'), webhookBot('shop', 'SHOP_SECRET', { manage: false })],
      routes: [
        { name: 'site', bots: ['sol'], target_url: `${receiver.url}/site` },
        {
          name: 'admin',
          bots: ['sol'],
          target_url: `${receiver.url}/admin-hook`,
          match: { commands: ['/admin'] },
        },
        {
          name: 'orders',
          bots: ['shop'],
          target_url: `${receiver.url}/orders`,
          match: { update_types: ['message'] },
        },
      ],
      clients: [{ name: 'web', token_env: 'WEB_CLIENT_TOKEN', bots: ['sol'] }],
    });
    app = await bootStandalone(config.path, {
      ADMIN_TOKEN,
      SOL_TOKEN: sol.token,
      SHOP_TOKEN: shop.token,
      SHOP_SECRET,
      WEB_CLIENT_TOKEN: CLIENT_TOKEN,
    });
  });

  afterAll(() => stopStandalone({ app, receiver, emulator, prefix, config }));

  it('counts updates, deliveries, dead letters, queues and Telegram calls as they happened', async () => {
    // Polling: three messages; the third is also an /admin command (fan-out to two routes).
    emulator.message(sol.token, { chatId: 1, text: 'hello 1' });
    emulator.message(sol.token, { chatId: 2, text: 'hello 2' });
    emulator.message(sol.token, { chatId: 1, text: '/admin now' });
    // Webhook: queued, duplicate, ignored (no route takes callback queries), rejected.
    const message = {
      update_id: 7001,
      message: { message_id: 1, date: 1, chat: { id: 9, type: 'private' }, text: 'order' },
    };
    expect(await webhook(message)).toBe(202);
    expect(await webhook(message)).toBe(202);
    expect(
      await webhook({
        update_id: 7002,
        callback_query: { id: 'cb', from: { id: 9, is_bot: false, first_name: 'A' }, data: 'x' },
      }),
    ).toBe(202);
    expect(await webhook({ update_id: 7003, message: message.message }, 'wrong_secret')).toBe(401);
    // The gateway: one sendMessage for a client.
    const sent = await request(`${app.url}/api/v1/sol/messages/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-token': CLIENT_TOKEN },
      body: JSON.stringify({ chat_id: 1, text: 'reply' }),
    });
    expect(sent.statusCode).toBe(200);
    await expectDocumentedAnswer({
      method: 'POST',
      url: `${app.url}/api/v1/sol/messages/send`,
      status: sent.statusCode,
      contentType: String(sent.headers['content-type']),
      body: await sent.body.json(),
    });

    await eventually(
      () =>
        at('/site').length === 3 && at('/orders').length === 1 && at('/admin-hook').length === 1
          ? true
          : undefined,
      { what: 'every delivery to be made', retryErrors: true },
    );
    const dead = await eventually(
      async () => {
        const { body } = await getJson(`${app.adminUrl}/admin/api/dead-letters?route=admin`, admin);
        const items = body.items as { delivery_id: string }[];
        return items.length === 1 ? items[0] : undefined;
      },
      { what: 'the dead letter of route admin', retryErrors: true },
    );

    const samples = await scrape();
    const value = (name: string, labels: Record<string, string> = {}) =>
      metricValue(samples, `relaygram_${name}`, labels);

    const received = 'updates_received_total';
    expect(value(received, { bot: 'sol', source: 'polling', outcome: 'queued' })).toBe(3);
    expect(value(received, { bot: 'sol' })).toBe(3);
    expect(value(received, { bot: 'shop', source: 'webhook', outcome: 'queued' })).toBe(1);
    expect(value(received, { bot: 'shop', outcome: 'duplicate' })).toBe(1);
    expect(value(received, { bot: 'shop', outcome: 'ignored' })).toBe(1);
    expect(value(received, { bot: 'shop', outcome: 'rejected' })).toBe(1);

    expect(value('deliveries_total', { route: 'site', outcome: 'delivered' })).toBe(3);
    expect(value('deliveries_total', { route: 'orders', outcome: 'delivered' })).toBe(1);
    expect(value('deliveries_total', { route: 'admin', outcome: 'dead' })).toBe(1);
    expect(value('deliveries_total', { outcome: 'retry' })).toBe(0);
    expect(value('dead_lettered_total', { route: 'admin', reason: 'rejected' })).toBe(1);
    expect(value('delivery_latency_seconds_count', { route: 'site' })).toBe(3);
    expect(value('delivery_latency_seconds_count', { route: 'admin' })).toBe(0);
    expect(value('delivery_attempts_sum', { route: 'admin' })).toBe(1);

    for (const route of ['site', 'admin', 'orders']) {
      expect(value('queue_depth', { route })).toBe(0);
      expect(value('lanes', { route })).toBe(0);
    }
    expect(value('dead_letters', { route: 'admin' })).toBe(1);
    expect(value('dead_letters', { route: 'site' })).toBe(0);
    expect(value('bot_healthy', { bot: 'sol' })).toBe(1);
    expect(value('bot_healthy', { bot: 'shop' })).toBe(1);

    const calls = 'telegram_api_calls_total';
    expect(value(calls, { bot: 'sol', method: 'sendMessage', code: '200' })).toBe(1);
    expect(value(calls, { bot: 'sol', method: 'getUpdates' })).toBeGreaterThanOrEqual(1);
    expect(value('telegram_api_errors_total')).toBe(0);
    expect(samples.some((s) => s.name === 'relaygram_process_cpu_user_seconds_total')).toBe(true);
    expect(samples.every((s) => s.labels.service === 'standalone')).toBe(true);

    // Re-sent from the admin API, the dead letter is delivered this time.
    const replay = await request(
      `${app.adminUrl}/admin/api/dead-letters/${dead.delivery_id}/replay`,
      { method: 'POST', headers: admin },
    );
    expect(replay.statusCode).toBe(200);
    await replay.body.dump();
    await eventually(() => (at('/admin-hook').length === 2 ? true : undefined), {
      what: 'the re-sent delivery',
      retryErrors: true,
    });
    const after = await eventually(
      async () => {
        const next = await scrape();
        return metricValue(next, 'relaygram_deliveries_total', {
          route: 'admin',
          outcome: 'delivered',
        }) === 1
          ? next
          : undefined;
      },
      { what: 'the delivered count after the re-send', retryErrors: true },
    );
    expect(metricValue(after, 'relaygram_dead_letters', { route: 'admin' })).toBe(0);
    expect(metricValue(after, 'relaygram_queue_depth', { route: 'admin' })).toBe(0);
    expect(at('/admin-hook')[1].headers['x-relaygram-delivery-id']).toBe(dead.delivery_id);
  });

  it('shows queued deliveries and lanes while a target is down', async () => {
    receiver.respondWith({ status: 503 });
    emulator.message(sol.token, { chatId: 3, text: 'held 1' });
    emulator.message(sol.token, { chatId: 3, text: 'held 2' });
    emulator.message(sol.token, { chatId: 4, text: 'held 3' });
    const samples = await eventually(
      async () => {
        const next = await scrape();
        return metricValue(next, 'relaygram_queue_depth', { route: 'site' }) === 3
          ? next
          : undefined;
      },
      { what: 'three deliveries waiting in two lanes', retryErrors: true },
    );
    expect(metricValue(samples, 'relaygram_lanes', { route: 'site' })).toBe(2);
    const healthz = await getJson(`${app.url}/healthz`);
    const bots = healthz.body.bots as { id: string; queue: number }[];
    expect(bots.find((b) => b.id === 'sol')?.queue).toBe(3);
    receiver.respondWith({ status: 204 });
  });
});
