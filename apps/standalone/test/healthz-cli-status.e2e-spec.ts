import { HealthRegistry, type RunningApp } from '@relaygram/observability';
import { runRelaygramCli, TelegramEmulator, type BotIdentity } from '@relaygram/testing';
import {
  bootStandalone,
  dropPrefix,
  eventually,
  getJson,
  uniquePrefix,
  writeConfig,
} from './admin-kit';

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
      routes: [],
      clients: [],
    });
    app = await bootStandalone(config.path, { SOL_TOKEN: sol.token });
    await eventually('sol to poll', async () => {
      const { body } = await getJson(`${app.url}/healthz`);
      return body.status === 'ok' && body.polling === true ? true : undefined;
    });
  });

  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
    await dropPrefix(prefix);
    config?.cleanup();
  });

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

  it('exits 2 when nothing answers', async () => {
    const run = await runRelaygramCli(['status', '--url', 'http://127.0.0.1:9']);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^relaygram status: http:\/\/127\.0\.0\.1:9: /);
  });
});
