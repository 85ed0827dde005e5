import { Secret, type BotConfig, type RelaygramConfig } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramEmulator, type BotIdentity } from '@relaygram/testing';
import pino from 'pino';
import { BotClients } from './bot-clients';

/** The dispatcher's Bot API clients across reloads, against the emulator. */
describe('BotClients', () => {
  let emulator: TelegramEmulator;
  let a: BotIdentity;
  let b: BotIdentity;
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) },
  );

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    a = emulator.addBot({ username: 'a_bot' });
    b = emulator.addBot({ username: 'b_bot' });
  });

  afterAll(() => emulator.stop());

  beforeEach(() => (lines.length = 0));

  function config(bots: BotIdentity[], apiBase = emulator.apiRoot): RelaygramConfig {
    return {
      redis: { url: 'redis://127.0.0.1:6379', prefix: 'unused', waitReplicas: 0, waitTimeoutMs: 1 },
      telegram: { apiBase },
      bots: bots.map((bot, i): BotConfig => ({
        id: `bot-${bot.username}`,
        tokenEnv: `T${i}`,
        token: new Secret(bot.token),
        numericId: String(bot.id),
        mode: 'polling',
        allowedUpdates: ['message'],
        default: i === 0,
      })),
      routes: [],
      clients: [],
      warnings: [],
      source: 'test',
    };
  }

  const clients = (cfg: RelaygramConfig) =>
    new BotClients(cfg, new RelaygramMetrics(), logger, { user: 'tests', connections: 1 });

  it('serves each configured bot its config and a client that reaches Telegram', async () => {
    const held = clients(config([a, b]));
    expect(held.built).toBe(true);
    expect(held.bot('bot-a_bot')?.numericId).toBe(String(a.id));
    expect(await held.client('bot-b_bot')?.call('getMe', {})).toMatchObject({ id: b.id });
    expect(held.bot('bot-nope')).toBeUndefined();
    expect(held.client('bot-nope')).toBeUndefined();
    await held.close();
  });

  it('follows a reload: a removed bot goes, an added one comes', async () => {
    const held = clients(config([a]));
    await held.reload(config([b]));
    expect(held.bot('bot-a_bot')).toBeUndefined();
    expect(held.client('bot-a_bot')).toBeUndefined();
    expect(await held.client('bot-b_bot')?.call('getMe', {})).toMatchObject({ id: b.id });
    await held.close();
  });

  it('keeps its clients when a reload cannot be used, and says so without the token', async () => {
    const held = clients(config([a]));
    await held.reload(config([a, b], 'not a url'));
    expect(await held.client('bot-a_bot')?.call('getMe', {})).toMatchObject({ id: a.id });
    expect(lines.map((line) => line.msg)).toContain(
      'tests keep the previous bots: the reloaded ones cannot be used',
    );
    expect(JSON.stringify(lines)).not.toContain(a.token);
    await held.close();
  });

  it('has no clients while none can be built, and gets them from a usable reload', async () => {
    const held = clients(config([a], 'not a url'));
    expect(held.built).toBe(false);
    expect(held.client('bot-a_bot')).toBeUndefined();
    expect(lines.map((line) => line.msg)).toEqual([
      'tests cannot reach Telegram until a reload brings usable bots: the Bot API clients cannot be built',
    ]);
    await held.reload(config([a]));
    expect(held.built).toBe(true);
    expect(await held.client('bot-a_bot')?.call('getMe', {})).toMatchObject({ id: a.id });
    await held.close();
  });
});
