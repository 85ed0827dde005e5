import { ConfigService } from '@relaygram/config';
import { laneId } from '@relaygram/contracts';
import type { IngressOptionsInput } from '@relaygram/ingress';
import { freePort } from '@relaygram/queue';
import {
  RecordingReceiver,
  runRelaygramCli,
  TelegramEmulator,
  type BotIdentity,
  eventually,
} from '@relaygram/testing';
import {
  TestInstall,
  webhookSecret,
  type BotSpec,
  type HealthzBot,
  type IngressInstance,
} from './support/test-install';

const WATCH_MS = 300;
const FAST: IngressOptionsInput = {
  webhook: { watchIntervalMs: WATCH_MS, setRetryMs: 300 },
  usernameRetryMs: 100,
};

describe('webhook management', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let bot: BotIdentity;
  let install: TestInstall;
  let port: number;
  let url: string;
  let spec: BotSpec;
  const secret = webhookSecret();

  beforeAll(async () => {
    emulator = await TelegramEmulator.start({
      webhookRetryDelayMs: 50,
      webhookMaxRetryDelayMs: 200,
    });
    receiver = await RecordingReceiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await emulator.stop();
  });

  beforeEach(async () => {
    bot = emulator.addBot();
    port = await freePort();
    url = `http://127.0.0.1:${port}/webhooks/telegram/shop`;
    spec = {
      id: 'shop',
      mode: 'webhook',
      token: bot.token,
      allowedUpdates: ['message', 'callback_query'],
      webhook: { url, secret, manage: true, maxConnections: 5 },
    };
    install = new TestInstall({
      apiBase: emulator.apiRoot,
      bots: [spec],
      routes: [{ name: 'site' }],
    });
    await install.ready();
  });
  afterEach(() => install.cleanup());

  const shopHealth = async (ingress: IngressInstance): Promise<HealthzBot> => {
    const { body } = await ingress.healthz();
    const found = body.bots.find((b) => b.id === 'shop');
    if (!found) throw new Error('shop is not in /healthz');
    return found;
  };

  it('sets the webhook at start, never dropping pending updates, and receives through it', async () => {
    const early = emulator.message(bot.id, { chatId: 11, text: 'sent before start' });
    const ingress = await install.start({ ingress: FAST, port });
    const [call] = await emulator.waitForCalls(bot.id, { method: 'setWebhook' });
    expect(call.params).toEqual({
      url,
      secret_token: secret,
      allowed_updates: ['message', 'callback_query'],
      max_connections: 5,
      drop_pending_updates: false,
    });
    const lane = laneId('site', 'shop', { kind: 'chat', chatId: 11 });
    await eventually(async () => (await install.laneEntries(lane)).length === 1, {
      what: 'the pending update delivered to ingress',
    });
    expect((await install.laneEntries(lane))[0].updateId).toBe(early.update_id);

    const health = await eventually(
      async () => {
        const found = await shopHealth(ingress);
        return found.webhook?.pending_update_count === 0 ? found : undefined;
      },
      { what: 'webhook info in /healthz' },
    );
    expect(health).toMatchObject({
      mode: 'webhook',
      polling: false,
      healthy: true,
      webhook: { url, pending_update_count: 0, max_connections: 5 },
    });
    expect(health.problem).toBeUndefined();
  });

  it('the incident: a 301 from an old URL shows in /healthz, and `relaygram webhook set` fixes it without dropping updates', async () => {
    const ingress = await install.start({ ingress: FAST, port });
    await emulator.waitForCalls(bot.id, { method: 'setWebhook' });
    await eventually(async () => (await shopHealth(ingress)).healthy, { what: 'healthy' });

    // An old deployment points the webhook back at the old address, which now redirects.
    receiver.respondWith({ status: 301, headers: { location: url } });
    const oldUrl = `${receiver.url}/telegram/old-hook`;
    await fetch(`${emulator.apiRoot}/bot${bot.token}/setWebhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: oldUrl, secret_token: secret }),
    });
    const stranded = [1, 2].map((n) => emulator.message(bot.id, { chatId: 22, text: `n${n}` }));

    const unhealthy = await eventually(
      async () => {
        const found = await shopHealth(ingress);
        return found.webhook?.last_error_message ? found : undefined;
      },
      { what: 'the 301 in /healthz' },
    );
    expect(unhealthy.healthy).toBe(false);
    expect(unhealthy.webhook).toMatchObject({
      url: oldUrl,
      pending_update_count: 2,
      last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
    });
    expect(unhealthy.problem).toContain('Wrong response from the webhook: 301 Moved Permanently');
    expect(unhealthy.problem).toContain(
      `Telegram sends updates to ${oldUrl}, not to the configured ${url}`,
    );
    expect((await ingress.healthz()).body.status).toBe('degraded');

    const run = await runRelaygramCli(['webhook', 'set', 'shop'], {
      ...install.env,
      RELAYGRAM_CONFIG: install.configPath,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const sets = emulator.calls(bot.id, { method: 'setWebhook' });
    expect(sets[sets.length - 1].params).toMatchObject({ url, drop_pending_updates: false });

    // Both stranded updates reach ingress: none was dropped.
    const lane = laneId('site', 'shop', { kind: 'chat', chatId: 22 });
    const entries = await eventually(
      async () => {
        const found = await install.laneEntries(lane);
        return found.length === 2 ? found : undefined;
      },
      { what: 'the stranded updates enqueued' },
    );
    expect(entries.map((e) => e.updateId)).toEqual(stranded.map((u) => u.update_id));
    const healthy = await eventually(
      async () => {
        const found = await shopHealth(ingress);
        return found.healthy && found.webhook?.pending_update_count === 0 ? found : undefined;
      },
      { what: 'healthy again, nothing pending' },
    );
    expect(healthy.webhook).toMatchObject({ url, pending_update_count: 0 });
    expect(healthy.problem).toBeUndefined();
  });

  it('sets the webhook from one replica when two start together, and watches from one per period', async () => {
    const [a, b] = await Promise.all([
      install.start({ ingress: FAST, port }),
      install.start({ ingress: FAST }),
    ]);
    await emulator.waitForCalls(bot.id, { method: 'setWebhook' });
    await eventually(async () => (await shopHealth(b)).webhook?.url === url, {
      what: 'the info shared with the other replica',
    });
    const infoCalls = () => emulator.calls(bot.id, { method: 'getWebhookInfo' }).length;
    const before = infoCalls();
    await new Promise((resolve) => setTimeout(resolve, 4 * WATCH_MS));
    // One replica per period: about 4 reads, where two replicas each reading would make 8.
    expect(infoCalls() - before).toBeGreaterThanOrEqual(2);
    expect(infoCalls() - before).toBeLessThanOrEqual(6);
    expect(emulator.calls(bot.id, { method: 'setWebhook' })).toHaveLength(1);
    // The same stored info, whichever replica answers (it may be refreshed in between).
    const seen = await Promise.all([a, b].map(async (i) => (await shopHealth(i)).webhook));
    for (const webhook of seen) {
      expect(webhook).toMatchObject({ url, max_connections: 5, pending_update_count: 0 });
    }
  });

  it('reads getWebhookInfo every webhook.check_every of the bot', async () => {
    install.write({
      apiBase: emulator.apiRoot,
      bots: [{ ...spec, webhook: { ...spec.webhook!, checkEvery: '1s' } }],
      routes: [{ name: 'site' }],
    });
    // No period from the options: the config's decides.
    const ingress = await install.start({ ingress: { webhook: { setRetryMs: 300 } }, port });
    await emulator.waitForCalls(bot.id, { method: 'setWebhook' });
    const infoCalls = () => emulator.calls(bot.id, { method: 'getWebhookInfo' }).length;
    const before = infoCalls();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    // About 3 reads in 3.5 s; at the default 60 s there would be none.
    expect(infoCalls() - before).toBeGreaterThanOrEqual(2);
    expect(infoCalls() - before).toBeLessThanOrEqual(5);
    expect((await shopHealth(ingress)).webhook?.url).toBe(url);
  });

  it('sends a rotated secret on reload, and the webhook takes only the new one', async () => {
    const ingress = await install.start({ ingress: FAST, port });
    await emulator.waitForCalls(bot.id, { method: 'setWebhook' });
    const rotated = webhookSecret();
    install.write({
      apiBase: emulator.apiRoot,
      bots: [{ ...spec, webhook: { ...spec.webhook!, secret: rotated } }],
      routes: [{ name: 'site' }],
    });
    install.exportEnv();
    expect((await ingress.get(ConfigService).reload()).ok).toBe(true);
    await eventually(() => emulator.calls(bot.id, { method: 'setWebhook' }).length === 2, {
      what: 'setWebhook with the new secret',
    });
    expect(emulator.calls(bot.id, { method: 'setWebhook' })[1].params.secret_token).toBe(rotated);
    const update = JSON.stringify({ update_id: 5, message: { text: 'x', chat: { id: 1 } } });
    const old = await ingress.post('/webhooks/telegram/shop', update, {
      'x-telegram-bot-api-secret-token': secret,
    });
    expect(old.status).toBe(401);
    const fresh = await ingress.post('/webhooks/telegram/shop', update, {
      'x-telegram-bot-api-secret-token': rotated,
    });
    expect(fresh.status).toBe(202);
  });

  it('reports a failed setWebhook and retries it', async () => {
    emulator.fail(bot.id, {
      method: 'setWebhook',
      times: 2,
      error: { code: 400, description: 'Bad Request: bad webhook: Failed to resolve host' },
    });
    const ingress = await install.start({ ingress: FAST, port });
    const failing = await eventually(
      async () => {
        const found = await shopHealth(ingress);
        return found.healthy ? undefined : found;
      },
      { what: 'unhealthy' },
    );
    expect(failing.problem).toContain(
      'setWebhook failed: ETELEGRAM: 400 Bad Request: bad webhook: Failed to resolve host',
    );
    await eventually(async () => (await shopHealth(ingress)).healthy, {
      what: 'healthy after the retry',
    });
    expect(emulator.calls(bot.id, { method: 'setWebhook' }).map((c) => c.status)).toEqual([
      400, 400, 200,
    ]);
  });
});
