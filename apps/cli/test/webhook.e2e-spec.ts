import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RecordingReceiver,
  runRelaygramCli,
  TelegramEmulator,
  type BotIdentity,
  type CliRun,
} from '@relaygram/testing';
import { stringify } from 'yaml';

describe('relaygram webhook', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let shop: BotIdentity;
  let sol: BotIdentity;
  let dir: string;
  let configPath: string;
  const secret = randomBytes(24).toString('base64url');
  let env: Record<string, string>;
  let hookUrl: string;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start({ webhookRetryDelayMs: 60_000 });
    receiver = await RecordingReceiver.start();
    // Updates pushed here stay pending: the webhook answers 500.
    receiver.respondWith({ status: 500 });
    shop = emulator.addBot({ username: 'shop_bot' });
    sol = emulator.addBot();
    dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-webhook-'));
    configPath = join(dir, 'relaygram.yaml');
    hookUrl = `${receiver.url}/webhooks/telegram/shop`;
    writeFileSync(
      configPath,
      stringify({
        telegram: { api_base: emulator.apiRoot },
        bots: [
          {
            id: 'shop',
            token_env: 'SHOP_TOKEN',
            mode: 'webhook',
            allowed_updates: ['message', 'callback_query', 'chat_member'],
            webhook: {
              url: hookUrl,
              secret_token_env: 'SHOP_SECRET',
              max_connections: 7,
            },
          },
          { id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' },
        ],
        routes: [],
        clients: [],
      }),
    );
    env = {
      SHOP_TOKEN: shop.token,
      SOL_TOKEN: sol.token,
      SHOP_SECRET: secret,
      RELAYGRAM_CONFIG: configPath,
    };
  });
  afterAll(async () => {
    await emulator.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const noSecrets = (run: CliRun) => {
    for (const value of [secret, shop.token, sol.token, shop.token.split(':')[1]]) {
      expect(run.stdout).not.toContain(value);
      expect(run.stderr).not.toContain(value);
    }
  };

  it('sets the configured webhook without dropping pending updates, and prints the result', async () => {
    const pending = emulator.message(shop.id, { chatId: 1, text: 'queued before the webhook' });
    const run = await runRelaygramCli(['webhook', 'set', 'shop'], env);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    noSecrets(run);
    const [call] = emulator.calls(shop.id, { method: 'setWebhook' });
    expect(call.params).toEqual({
      url: hookUrl,
      secret_token: secret,
      allowed_updates: ['message', 'callback_query', 'chat_member'],
      max_connections: 7,
      drop_pending_updates: false,
    });
    expect(emulator.pendingUpdates(shop.id).map((u) => u.update_id)).toEqual([pending.update_id]);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^bot\s+shop \(webhook\)$/);
    expect(lines[1]).toMatch(/^done\s+setWebhook \(pending updates kept\)$/);
    expect(run.stdout).toMatch(new RegExp(`^url\\s+${hookUrl}$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^configured url\\s+${hookUrl}$`, 'm'));
    expect(run.stdout).toMatch(/^max connections\s+7$/m);
    expect(run.stdout).toMatch(/^allowed updates\s+message, callback_query, chat_member$/m);
  });

  it('shows the info as a table, with the last error and what is wrong', async () => {
    await receiverFailure();
    const run = await runRelaygramCli(['webhook', 'info', 'shop'], env);
    expect(run.status).toBe(0);
    noSecrets(run);
    expect(run.stdout).toMatch(/^pending updates\s+[1-9]\d*$/m);
    expect(run.stdout).toMatch(
      /^last error message\s+Wrong response from the webhook: 500 Internal Server Error$/m,
    );
    expect(run.stdout).toMatch(/^last error date\s+\d{4}-\d\d-\d\dT.*Z \(\d+ s ago\)$/m);
    expect(run.stdout).toMatch(
      /^status\s+problem: Telegram cannot deliver \(\d+ pending\): Wrong response from the webhook: 500 Internal Server Error$/m,
    );
  });

  it('prints JSON with --json', async () => {
    const run = await runRelaygramCli(['webhook', 'info', 'shop', '--json'], env);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      bot: 'shop',
      mode: 'webhook',
      configured_url: hookUrl,
      status: 'problem',
      webhook: {
        url: hookUrl,
        has_custom_certificate: false,
        max_connections: 7,
        last_error_message: 'Wrong response from the webhook: 500 Internal Server Error',
      },
    });
  });

  it('deletes the webhook without dropping pending updates', async () => {
    const before = emulator.pendingUpdates(shop.id).length;
    expect(before).toBeGreaterThan(0);
    const run = await runRelaygramCli(
      ['webhook', 'delete', 'shop', '--json', '--config', configPath],
      env,
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(
      'note: ingress sets the webhook of shop again at its next start (webhook.manage is true)\n',
    );
    expect(emulator.calls(shop.id, { method: 'deleteWebhook' })[0].params).toEqual({
      drop_pending_updates: false,
    });
    expect(emulator.pendingUpdates(shop.id)).toHaveLength(before);
    expect(JSON.parse(run.stdout)).toMatchObject({
      action: 'delete',
      status: 'problem',
      webhook: { url: '', pending_update_count: before },
    });
  });

  it('refuses to set a webhook for a polling bot, and names unknown bots', async () => {
    const polling = await runRelaygramCli(['webhook', 'set', 'sol'], env);
    expect(polling.status).toBe(1);
    expect(polling.stderr).toMatch(/^relaygram: bot sol is in polling mode/);
    expect(emulator.calls(sol.id, { method: 'setWebhook' })).toEqual([]);

    const unknown = await runRelaygramCli(['webhook', 'info', 'nope'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe(
      `relaygram: unknown bot "nope" in ${configPath} (bots: shop, sol)\n`,
    );

    const info = await runRelaygramCli(['webhook', 'info', 'sol'], env);
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/^status\s+no webhook expected$/m);
  });

  it("reports Telegram's error without the token", async () => {
    emulator.failUnauthorized(shop.id, 1);
    const run = await runRelaygramCli(['webhook', 'info', 'shop'], env);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'relaygram: getWebhookInfo failed for bot shop: ETELEGRAM: 401 Unauthorized\n',
    );
    noSecrets(run);
  });

  it('says what is wrong with the config file', async () => {
    const run = await runRelaygramCli(['webhook', 'info', 'shop'], { ...env, SHOP_SECRET: '' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/invalid configuration:\n.*SHOP_SECRET/);
  });

  /** Sets the webhook and waits until the receiver's 500 is recorded with an update pending. */
  async function receiverFailure(): Promise<void> {
    if (!emulator.webhookInfo(shop.id).url) await runRelaygramCli(['webhook', 'set', 'shop'], env);
    const deadline = Date.now() + 5000;
    while (!emulator.webhookInfo(shop.id).last_error_message) {
      if (Date.now() > deadline) throw new Error('no webhook error recorded');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
});
