import { HealthRegistry } from '@relaygram/observability';
import type { RunningApp } from '@relaygram/platform';
import {
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

type Bot = Record<string, unknown>;

function botsOf(body: Record<string, unknown>): Record<string, Bot> {
  return Object.fromEntries((body.bots as Bot[]).map((bot) => [bot.id as string, bot]));
}

/** The spec's shape: every bot has these, with these types. */
function expectSpecShape(body: Record<string, unknown>, service: string): void {
  expect(body).toMatchObject({
    status: expect.stringMatching(/^(ok|degraded)$/),
    service,
    polling: expect.any(Boolean),
    bots: expect.any(Array),
  });
  for (const bot of body.bots as Bot[]) {
    expect(bot).toMatchObject({
      id: expect.any(String),
      mode: expect.stringMatching(/^(polling|webhook)$/),
      polling: expect.any(Boolean),
      healthy: expect.any(Boolean),
      queue: expect.any(Number),
      dead: expect.any(Number),
    });
  }
}

describe('/healthz (standalone)', () => {
  let emulator: TelegramEmulator;
  let sol: BotIdentity;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeEmulatedConfig>;
  let app: RunningApp;
  let logs: CapturedLogs;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    sol = emulator.addBot({ username: 'sol_health_bot' });
    shop = emulator.addBot({ username: 'shop_health_bot' });
    prefix = uniquePrefix('healthz');
    config = writeEmulatedConfig(prefix, emulator.apiRoot, {
      bots: [pollingBot('sol'), webhookBot('shop', 'SHOP_SECRET', { manage: false })],
      routes: [],
      clients: [],
    });
    logs = captureLogs();
    app = await bootStandalone(
      config.path,
      { SOL_TOKEN: sol.token, SHOP_TOKEN: shop.token, SHOP_SECRET: 'shop_secret_0123456789' },
      logs,
    );
  });

  afterAll(() => stopStandalone({ app, emulator, prefix, config }));

  const healthz = (base = app.url) => getJson(`${base}/healthz`);

  it('is ok when every bot is healthy, with the spec fields for each bot', async () => {
    const { body, status } = await eventually(
      async () => {
        const answer = await healthz();
        return answer.body.status === 'ok' && botsOf(answer.body).sol?.polling ? answer : undefined;
      },
      { what: 'the poller of sol to run', retryErrors: true },
    );
    expect(status).toBe(200);
    expectSpecShape(body, 'standalone');
    expect(body.polling).toBe(true);
    const bots = botsOf(body);
    expect(Object.keys(bots)).toEqual(['sol', 'shop']);
    expect(bots.sol).toMatchObject({
      mode: 'polling',
      polling: true,
      healthy: true,
      queue: 0,
      dead: 0,
    });
    expect(bots.shop).toMatchObject({
      mode: 'webhook',
      polling: false,
      healthy: true,
      webhook: { expected_url: 'https://relay.example.com/webhooks/telegram/shop' },
    });
    expect(bots.sol.problem).toBeUndefined();
  });

  it('answers the same on the management listener', async () => {
    const pub = await healthz();
    const admin = await healthz(app.adminUrl);
    expect(admin.status).toBe(200);
    expect(botsOf(admin.body).sol.healthy).toBe(botsOf(pub.body).sol.healthy);
  });

  it('is degraded, still 200, when a feature reports a bot unhealthy (401)', async () => {
    const registry = app.app.get(HealthRegistry);
    registry.addBotHealthSource('test-401', () => [
      {
        id: 'shop',
        mode: 'webhook',
        polling: false,
        healthy: false,
        problem: 'getMe: ETELEGRAM: 401 Unauthorized',
      },
    ]);
    try {
      const { status, body } = await healthz();
      expect(status).toBe(200);
      expectSpecShape(body, 'standalone');
      expect(body.status).toBe('degraded');
      const bots = botsOf(body);
      expect(bots.shop).toMatchObject({
        healthy: false,
        problem: expect.stringContaining('401 Unauthorized'),
      });
      expect(bots.sol.healthy).toBe(true);
    } finally {
      registry.removeBotHealthSource('test-401');
    }
    expect((await healthz()).body.status).toBe('ok');
  });

  it('is degraded when the webhook Telegram reports has drifted from the config', async () => {
    const registry = app.app.get(HealthRegistry);
    const now = Math.floor(Date.now() / 1000);
    registry.addBotHealthSource('test-drift', () => [
      {
        id: 'shop',
        mode: 'webhook',
        polling: false,
        healthy: true,
        webhook: {
          url: 'https://old.example.com/hook',
          pending_update_count: 12,
          last_error_date: now - 30,
          last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
        },
      },
    ]);
    try {
      const { status, body } = await healthz();
      expect(status).toBe(200);
      expect(body.status).toBe('degraded');
      const { shop: bot } = botsOf(body);
      expect(bot).toMatchObject({
        healthy: false,
        webhook: {
          expected_url: 'https://relay.example.com/webhooks/telegram/shop',
          url: 'https://old.example.com/hook',
          pending_update_count: 12,
          last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
        },
      });
      expect(bot.problem).toMatch(/old\.example\.com.*relay\.example\.com/);
    } finally {
      registry.removeBotHealthSource('test-drift');
    }
  });

  it('keeps probes out of the access log, and logs other requests with their id', async () => {
    for (const path of ['/healthz', '/health/live', '/health/ready']) {
      const res = await request(`${app.url}${path}`);
      await res.body.dump();
    }
    const res = await request(`${app.url}/no-such-page`, {
      headers: { 'x-request-id': 'req-from-the-proxy-1' },
    });
    await res.body.dump();
    expect(res.headers['x-request-id']).toBe('req-from-the-proxy-1');
    const line = await eventually(
      () =>
        logs.lines
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.url === '/no-such-page'),
      { what: 'the access line', retryErrors: true },
    );
    expect(line).toMatchObject({ msg: 'request', status: 404, req_id: 'req-from-the-proxy-1' });
    const probes = logs.lines.filter((l) => /"url":"\/(healthz|health\/)/.test(l));
    expect(probes).toEqual([]);
  });

  it('is degraded when Telegram refuses a polling bot token (401)', async () => {
    emulator.failUnauthorized(sol.token, 'always');
    // End the poller's long poll: its next getUpdates meets the 401.
    emulator.message(sol.token, { chatId: 1, text: 'wake up' });
    const body = await eventually(
      async () => {
        const answer = await healthz();
        return botsOf(answer.body).sol?.healthy === false ? answer.body : undefined;
      },
      { what: 'sol to be unhealthy', retryErrors: true },
    );
    expect(body.status).toBe('degraded');
    expect(botsOf(body).sol).toMatchObject({ healthy: false, problem: expect.any(String) });
    emulator.clearFailures(sol.token);
  });
});
