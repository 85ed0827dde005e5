import { HealthRegistry } from '@relaygram/observability';
import type { RunningApp } from '@relaygram/platform';
import {
  createRedis,
  DrainScheduler,
  newDeliveryId,
  PullStore,
  pullLaneId,
  queueContext,
  UpdateEnqueuer,
  waitForRedis,
} from '@relaygram/queue';
import {
  runRelaygramCli,
  TelegramEmulator,
  type BotIdentity,
  eventually,
} from '@relaygram/testing';
import { request } from 'undici';
import {
  bootStandalone,
  getJson,
  metricValue,
  parseMetrics,
  uniquePrefix,
  writeConfig,
  stopStandalone,
} from './admin-kit';

const SUPPORT_TOKEN = 'support-bot-client-token-0123456789';

describe('relaygram status (against a standalone app)', () => {
  let emulator: TelegramEmulator;
  let sol: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    sol = emulator.addBot({ username: 'sol_status_bot' });
    prefix = uniquePrefix('cli-status');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' }],
      routes: [{ name: 'support', bots: ['sol'], pull: { client: 'support-bot' } }],
      clients: [{ name: 'support-bot', token_env: 'SUPPORT_TOKEN', bots: ['sol'] }],
    });
    app = await bootStandalone(config.path, { SOL_TOKEN: sol.token, SUPPORT_TOKEN });
    await eventually(
      async () => {
        const { body } = await getJson(`${app.url}/healthz`);
        return body.status === 'ok' && body.polling === true ? true : undefined;
      },
      { what: 'sol to poll', retryErrors: true },
    );
  });

  afterAll(() => stopStandalone({ app, emulator, prefix, config }));

  it('prints the bots as a table and exits 0 when all is well', async () => {
    const run = await runRelaygramCli(['status', '--url', app.url]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`standalone at ${app.url}: ok (polling)`);
    expect(lines[1].split(/\s+/)).toEqual([
      'BOT',
      'MODE',
      'POLLING',
      'HEALTHY',
      'QUEUE',
      'DEAD',
      'PROBLEM',
    ]);
    expect(lines[2].split(/\s+/)).toEqual(['sol', 'polling', 'yes', 'yes', '0', '0']);
  });

  it('prints the JSON as received with --json, from the management port too', async () => {
    const run = await runRelaygramCli(['status', '--json', '--url', `${app.adminUrl}/healthz`]);
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', service: 'standalone', polling: true });
  });

  it('exits 1 and shows the problem when a bot is unhealthy', async () => {
    const registry = app.app.get(HealthRegistry);
    registry.addBotHealthSource('test-cli', () => [
      { id: 'sol', mode: 'polling', polling: true, healthy: false, problem: 'getUpdates: 401' },
    ]);
    try {
      const run = await runRelaygramCli(['status', '--url', app.url]);
      expect(run.status).toBe(1);
      expect(run.stdout).toContain(': degraded');
      expect(run.stdout).toMatch(/sol\s+polling\s+yes\s+no\s+0\s+0\s+getUpdates: 401/);
    } finally {
      registry.removeBotHealthSource('test-cli');
    }
  });

  it('shows each pull route with its pending updates and last poll; stale is degraded until its client polls', async () => {
    const fresh = await runRelaygramCli(['status', '--url', app.url]);
    expect(fresh.status).toBe(0);
    const lines = fresh.stdout.trimEnd().split('\n');
    expect(lines.slice(3).map((line) => line.split(/\s+/))).toEqual([
      [''],
      ['PULL', 'ROUTE', 'BOT', 'CLIENT', 'PENDING', 'LAST', 'POLL', 'STALE'],
      ['support', 'sol', 'support-bot', '0', 'never', 'no'],
    ]);

    // An update waits, and the client last polled 6 minutes ago.
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    await waitForRedis(redis);
    const ctx = queueContext(redis, prefix);
    const scheduler = new DrainScheduler(ctx);
    const polledAt = Date.now() - 6 * 60_000;
    try {
      await new UpdateEnqueuer(ctx, scheduler).enqueue({
        bot: 'sol',
        updateId: 77,
        body: Buffer.from('{"update_id":77,"message":{"chat":{"id":5},"text":"help"}}'),
        deliveries: [
          {
            route: 'support',
            lane: pullLaneId('support', 'sol'),
            deliveryId: newDeliveryId(),
            pull: true,
          },
        ],
      });
      await new PullStore(ctx).take({
        route: 'support',
        bot: 'sol',
        token: 'six-minutes-ago',
        mode: 'claim',
        limit: 1,
        waits: false,
        maxAgeMs: 3600_000,
        now: polledAt,
      });
    } finally {
      await scheduler.close();
      await redis.quit();
    }

    const { status, body } = await getJson(`${app.url}/healthz`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'degraded',
      bots: [
        {
          id: 'sol',
          healthy: false,
          problem:
            'pull route support: client support-bot has not polled for 5 minutes while 1 updates wait',
          pull_routes: [
            {
              route: 'support',
              client: 'support-bot',
              pending: 1,
              last_polled_at: new Date(polledAt).toISOString(),
              stale: true,
            },
          ],
        },
      ],
    });
    const stale = await runRelaygramCli(['status', '--url', app.url]);
    expect(stale.status).toBe(1);
    expect(stale.stdout).toMatch(
      new RegExp(
        `support\\s+sol\\s+support-bot\\s+1\\s+${new Date(polledAt).toISOString()}\\s+yes`,
      ),
    );
    const scrape = async () =>
      parseMetrics(await (await request(`${app.adminUrl}/metrics`)).body.text());
    const before = await scrape();
    expect(metricValue(before, 'relaygram_pull_pending', { route: 'support' })).toBe(1);
    expect(metricValue(before, 'relaygram_pull_stale', { route: 'support' })).toBe(1);

    // The client polls through the drop-in: fresh again, its update still pending.
    const drop = `${app.url}/bot${sol.id}:${SUPPORT_TOKEN}`;
    const polled = await request(`${drop}/getUpdates`);
    expect(await polled.body.json()).toMatchObject({ ok: true, result: [{ update_id: 77 }] });
    const after = await runRelaygramCli(['status', '--url', app.url]);
    expect(after.status).toBe(0);
    expect(after.stdout).toMatch(/support\s+sol\s+support-bot\s+1\s+\S+Z\s+no/);
    expect(metricValue(await scrape(), 'relaygram_pull_stale', { route: 'support' })).toBe(0);
    await (await request(`${drop}/getUpdates?offset=78`)).body.dump();
    // Three CLI processes: slow on a busy machine.
  }, 90_000);

  it('exits 2 when nothing answers', async () => {
    const run = await runRelaygramCli(['status', '--url', 'http://127.0.0.1:9']);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^relaygram status: http:\/\/127\.0\.0\.1:9: /);
  });
});
