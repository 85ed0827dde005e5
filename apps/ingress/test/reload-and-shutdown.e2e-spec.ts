import { randomInt } from 'node:crypto';
import { ConfigService } from '@relaygram/config';
import { laneId } from '@relaygram/contracts';
import { PollingAdapter, type IngressOptionsInput } from '@relaygram/ingress';
import { TelegramEmulator, type BotIdentity, eventually } from '@relaygram/testing';
import { TestInstall, webhookSecret, type BotSpec, type InstallSpec } from './support/test-install';

const FAST: IngressOptionsInput = {
  polling: { timeoutSeconds: 30, leaseTtlMs: 1500, networkBackoffMs: 50 },
};

describe('SIGHUP reload', () => {
  let emulator: TelegramEmulator;
  let alpha: BotIdentity;
  let beta: BotIdentity;
  let hook: BotIdentity;
  let install: TestInstall;
  const secret = webhookSecret();
  let hookBot: BotSpec;

  const spec = (polling: BotIdentity[]): InstallSpec => ({
    apiBase: emulator.apiRoot,
    bots: [
      hookBot,
      ...polling.map((b) => ({
        id: b === alpha ? 'alpha' : 'beta',
        mode: 'polling' as const,
        token: b.token,
      })),
    ],
    routes: [{ name: 'site' }],
  });

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    alpha = emulator.addBot();
    beta = emulator.addBot();
    hook = emulator.addBot();
    hookBot = {
      id: 'hook',
      mode: 'webhook',
      token: hook.token,
      username: 'hook_bot',
      webhook: { url: 'https://relay.example/webhooks/telegram/hook', secret },
    };
    install = new TestInstall({ apiBase: '', bots: [], routes: [] });
    install.write(spec([alpha]));
    await install.ready();
  });
  afterAll(async () => {
    await install.cleanup();
    await emulator.stop();
  });

  it('starts the poller of an added bot and stops the one of a removed bot, dropping no webhook request', async () => {
    const ingress = await install.start({ ingress: FAST });
    const adapter = ingress.get(PollingAdapter);
    await eventually(() => adapter.poller('alpha')?.polling === true, { what: 'alpha polling' });

    // Webhook requests keep coming in while the config is reloaded twice.
    let sending = true;
    const answers: number[] = [];
    const traffic = (async () => {
      while (sending) {
        const update = {
          update_id: randomInt(1, 2 ** 40),
          message: { message_id: 1, chat: { id: 5, type: 'private' }, date: 1, text: 'hi' },
        };
        const res = await ingress.post('/webhooks/telegram/hook', JSON.stringify(update), {
          'x-telegram-bot-api-secret-token': secret,
        });
        answers.push(res.status);
      }
    })();

    install.write(spec([alpha, beta]));
    install.exportEnv();
    expect((await ingress.get(ConfigService).reload()).ok).toBe(true);
    await eventually(() => adapter.poller('beta')?.polling === true, { what: 'beta polling' });
    const update = emulator.message(beta.id, { chatId: 9, text: 'to beta' });
    await eventually(
      async () =>
        (await install.laneEntries(laneId('site', 'beta', { kind: 'chat', chatId: 9 }))).length ===
        1,
      { what: "beta's update enqueued" },
    );
    expect(
      (await install.laneEntries(laneId('site', 'beta', { kind: 'chat', chatId: 9 })))[0].updateId,
    ).toBe(update.update_id);

    install.write(spec([beta]));
    expect((await ingress.get(ConfigService).reload()).ok).toBe(true);
    // The removed bot's poller stopped at once: its long poll aborted, its lease freed.
    expect(adapter.poller('alpha')).toBeUndefined();
    expect(await install.redis.exists(install.keys.pollerLease('alpha'))).toBe(0);
    const alphaCalls = emulator.calls(alpha.id, { method: 'getUpdates' }).length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(emulator.calls(alpha.id, { method: 'getUpdates' })).toHaveLength(alphaCalls);
    expect(adapter.poller('beta')?.polling).toBe(true);
    expect((await ingress.healthz()).body.bots.map((b) => b.id).sort()).toEqual(['beta', 'hook']);

    sending = false;
    await traffic;
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((status) => status === 202)).toBe(true);
    await ingress.close();
  });

  it('refuses an invalid file and keeps polling with the old config', async () => {
    install.write(spec([alpha]));
    const ingress = await install.start({ ingress: FAST });
    const adapter = ingress.get(PollingAdapter);
    await eventually(() => adapter.poller('alpha')?.polling === true);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(install.configPath, 'bots: [\n');
    expect((await ingress.get(ConfigService).reload()).ok).toBe(false);
    expect(adapter.poller('alpha')?.polling).toBe(true);
    await ingress.close();
  });
});

describe('SIGTERM', () => {
  let emulator: TelegramEmulator;
  let bot: BotIdentity;
  let install: TestInstall;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
  });
  beforeEach(async () => {
    bot = emulator.addBot();
    install = new TestInstall({
      apiBase: emulator.apiRoot,
      bots: [{ id: 'sol', mode: 'polling', token: bot.token }],
      routes: [{ name: 'site' }],
    });
    await install.ready();
  });
  afterEach(() => install.cleanup());
  afterAll(() => emulator.stop());

  it('aborts a long poll that is only waiting and frees the lease', async () => {
    const ingress = await install.start({ ingress: FAST });
    await eventually(
      () => emulator.calls(bot.id, { method: 'getUpdates' }).some((c) => c.status === undefined),
      { what: 'a waiting long poll' },
    );
    const started = Date.now();
    await ingress.close();
    // A 30 s long poll did not hold the shutdown.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await install.redis.exists(install.keys.pollerLease('sol'))).toBe(0);
    expect(await install.redis.hget(install.keys.botState('sol'), 'poller_state')).toBe('stopped');
  });

  it('finishes the batch in progress and saves its offset before exiting', async () => {
    let inBatch: () => void = () => undefined;
    const entered = new Promise<void>((resolve) => (inBatch = resolve));
    // Queued before start, so the first getUpdates takes all three in one batch.
    const sent = [1, 2, 3].map((n) => emulator.message(bot.id, { chatId: 3, text: `${n}` }));
    const ingress = await install.start({
      ingress: {
        ...FAST,
        polling: {
          ...FAST.polling,
          afterBatchEnqueued: async () => {
            inBatch();
            await new Promise((resolve) => setTimeout(resolve, 300));
          },
        },
      },
    });
    await entered;
    await ingress.close();
    expect(await install.redis.get(install.keys.pollerOffset('sol'))).toBe(
      String(sent[2].update_id + 1),
    );
    expect(
      (await install.laneEntries(laneId('site', 'sol', { kind: 'chat', chatId: 3 }))).map(
        (e) => e.updateId,
      ),
    ).toEqual(sent.map((u) => u.update_id));
    expect(await install.redis.exists(install.keys.pollerLease('sol'))).toBe(0);
  });
});
