import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { RunningApp } from '@relaygram/platform';
import { freePort } from '@relaygram/queue';
import {
  killHard,
  RecordingReceiver,
  TelegramEmulator,
  trackChild,
  type BotIdentity,
  eventually,
  webhookBot,
  writeEmulatedConfig,
} from '@relaygram/testing';
import { Bot } from 'grammy';
import { Telegraf } from 'telegraf';
import { request } from 'undici';
import {
  bootStandalone,
  uniquePrefix,
  type CapturedLogs,
  captureLogs,
  stopStandalone,
} from './admin-kit';

const SHOP_SECRET = 'pull_frameworks_webhook_secret';
const TOKENS = {
  grammy: 'grammy-client-token-0123456789',
  telegraf: 'telegraf-client-token-0123456789',
  ntba: 'ntba-client-token-0123456789abc',
};
const GROUP = -1001234500;
/** 50 private chats. */
const CHATS = Array.from({ length: 50 }, (_, i) => 701 + i);

/** The part of node-telegram-bot-api this test uses (the package ships no types). */
interface NtbaMessage {
  message_id: number;
  chat: { id: number };
}
interface NtbaBot {
  on(event: 'message', listener: (message: NtbaMessage) => void): void;
  on(event: 'callback_query', listener: (query: { id: string }) => void): void;
  on(event: 'polling_error', listener: (error: Error) => void): void;
  sendMessage(chatId: number, text: string): Promise<unknown>;
  stopPolling(options?: { cancel?: boolean }): Promise<void>;
}
type NtbaConstructor = new (token: string, options: Record<string, unknown>) => NtbaBot;
const TelegramBot = createRequire(__filename)('node-telegram-bot-api') as NtbaConstructor;

type Kind = 'order' | 'button' | 'group';

/** Through the webhook, as the acceptance run: 2,000 updates over 50 chats and a group. */
const UPDATES = 2000;

/**
 * A grammY bot in a process of its own: prints each update id it handles, and with
 * KILL_AFTER kills itself (SIGKILL) right after handling that many, mid-batch.
 */
const POLLING_BOT = `
const { Bot } = require('grammy');
const bot = new Bot(process.env.TOKEN, { client: { apiRoot: process.env.API_ROOT } });
const killAfter = Number(process.env.KILL_AFTER || 0);
let handled = 0;
bot.use(async (ctx) => {
  process.stdout.write(ctx.update.update_id + '\\n');
  if (++handled === killAfter) process.kill(process.pid, 'SIGKILL');
});
bot.catch((error) => process.stderr.write(String(error) + '\\n'));
void bot.start({ timeout: 5 });
`;

const REPO = join(__dirname, '..', '..', '..');

/** Relaygram as it runs in production: a standalone process of its own, from source. */
function spawnRelaygram(env: Record<string, string>): ChildProcess {
  const main = join(REPO, 'apps', 'standalone', 'src', 'main.ts');
  const child = spawn(process.execPath, ['-r', require.resolve('@swc-node/register'), main], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? '',
      SWC_NODE_PROJECT: join(REPO, 'tsconfig.base.json'),
      ...env,
    },
    stdio: 'ignore',
  });
  trackChild(child, 'relaygram-standalone');
  return child;
}

interface BotProcess {
  child: ChildProcess;
  handled: number[];
}

function startPollingBot(env: Record<string, string>): BotProcess {
  const child = spawn(process.execPath, ['-e', POLLING_BOT], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  trackChild(child, 'grammy-bot');
  const handled: number[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    handled.push(...lines.map(Number));
  });
  return { child, handled };
}

/**
 * Three long-polling bots written for Telegram, each with only its API root and token
 * changed, share one bot through pull routes with different rules, while a push route
 * on the same bot gets its own: the updates come in through the webhook.
 */
describe('pull routes: grammY, Telegraf and node-telegram-bot-api unchanged (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeEmulatedConfig>;
  let app: RunningApp;
  let logs: CapturedLogs;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith(() => ({ status: 204 }));
    shop = emulator.addBot({ username: 'shop_pull_bot' });
    prefix = uniquePrefix('pull-frameworks');
    config = writeEmulatedConfig(prefix, emulator.apiRoot, {
      bots: [
        // The replies are not what is tested here: no flood limits in the way.
        webhookBot('shop', 'SHOP_SECRET', { manage: false }, { outbound: { enabled: false } }),
      ],
      routes: [
        {
          name: 'orders',
          bots: ['shop'],
          pull: { client: 'grammy' },
          match: { commands: ['/order'] },
        },
        {
          name: 'buttons',
          bots: ['shop'],
          pull: { client: 'telegraf' },
          match: { update_types: ['callback_query'] },
        },
        { name: 'group', bots: ['shop'], pull: { client: 'ntba' }, match: { chat_ids: [GROUP] } },
        {
          name: 'archive',
          bots: ['shop'],
          target_url: `${receiver.url}/archive`,
          match: { update_types: ['message'] },
        },
      ],
      clients: [
        { name: 'grammy', token_env: 'GRAMMY_TOKEN', bots: ['shop'] },
        { name: 'telegraf', token_env: 'TELEGRAF_TOKEN', bots: ['shop'] },
        { name: 'ntba', token_env: 'NTBA_TOKEN', bots: ['shop'] },
      ],
    });
    logs = captureLogs();
    app = await bootStandalone(
      config.path,
      {
        SHOP_TOKEN: shop.token,
        SHOP_SECRET,
        GRAMMY_TOKEN: TOKENS.grammy,
        TELEGRAF_TOKEN: TOKENS.telegraf,
        NTBA_TOKEN: TOKENS.ntba,
      },
      logs,
    );
  });

  afterAll(() => stopStandalone({ app, receiver, emulator, prefix, config }));

  function update(updateId: number, kind: Kind): Record<string, unknown> {
    const chatId = CHATS[updateId % CHATS.length] as number;
    const from = { id: chatId, is_bot: false, first_name: 'Ann' };
    const date = Math.floor(Date.now() / 1000);
    switch (kind) {
      case 'order':
        return {
          update_id: updateId,
          message: {
            message_id: updateId,
            date,
            from,
            chat: { id: chatId, type: 'private', first_name: 'Ann' },
            text: `/order ${updateId}`,
            entities: [{ type: 'bot_command', offset: 0, length: 6 }],
          },
        };
      case 'button':
        return {
          update_id: updateId,
          callback_query: {
            id: String(updateId),
            from,
            chat_instance: '42',
            data: `pick:${updateId}`,
            message: {
              message_id: 1,
              date,
              chat: { id: chatId, type: 'private', first_name: 'Ann' },
              text: 'pick one',
            },
          },
        };
      case 'group':
        return {
          update_id: updateId,
          message: {
            message_id: updateId,
            date,
            from,
            chat: { id: GROUP, type: 'supergroup', title: 'Shop group' },
            text: `hello ${updateId}`,
          },
        };
    }
  }

  async function webhook(body: Record<string, unknown>): Promise<void> {
    const res = await request(`${app.url}/webhooks/telegram/shop`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': SHOP_SECRET,
      },
      body: JSON.stringify(body),
    });
    await res.body.dump();
    expect(res.statusCode).toBeLessThan(300);
  }

  it('each receives exactly its route’s updates in acceptance order and replies through the drop-in', async () => {
    const errors: unknown[] = [];
    const seen = { grammy: [] as number[], telegraf: [] as number[], ntba: [] as number[] };

    const grammy = new Bot(`${shop.id}:${TOKENS.grammy}`, { client: { apiRoot: app.url } });
    grammy.use(async (ctx) => {
      seen.grammy.push(ctx.update.update_id);
      if (ctx.chat) await ctx.reply(`grammy ${ctx.update.update_id}`);
    });
    grammy.catch((error) => errors.push(error));

    const telegraf = new Telegraf(`${shop.id}:${TOKENS.telegraf}`, {
      telegram: { apiRoot: app.url },
    });
    telegraf.use(async (ctx) => {
      seen.telegraf.push(ctx.update.update_id);
      if (ctx.chat) await ctx.reply(`telegraf ${ctx.update.update_id}`);
    });
    telegraf.catch((error) => void errors.push(error));

    const ntba = new TelegramBot(`${shop.id}:${TOKENS.ntba}`, {
      baseApiUrl: app.url,
      polling: { interval: 50, params: { timeout: 10 } },
    });
    // The updates' message ids and callback query ids are their update ids.
    ntba.on('message', (message) => {
      seen.ntba.push(message.message_id);
      ntba
        .sendMessage(message.chat.id, `ntba ${message.message_id}`)
        .catch((error: unknown) => errors.push(error));
    });
    ntba.on('callback_query', (query) => seen.ntba.push(Number(query.id)));
    ntba.on('polling_error', (error) => errors.push(error));

    const grammyStopped = grammy.start({ timeout: 30 });
    const telegrafStopped = telegraf.launch();
    try {
      const expected = { grammy: [] as number[], telegraf: [] as number[], ntba: [] as number[] };
      const archived: number[] = [];
      const kinds: Kind[] = ['order', 'button', 'group'];
      for (let i = 0; i < UPDATES; i++) {
        const updateId = 20_000 + i;
        // Not round-robin, so that no route's share follows from the others'.
        const kind = kinds[(i * 7 + Math.floor(i / 5)) % 3] as Kind;
        await webhook(update(updateId, kind));
        if (kind === 'order') expected.grammy.push(updateId);
        if (kind === 'button') expected.telegraf.push(updateId);
        if (kind === 'group') expected.ntba.push(updateId);
        if (kind !== 'button') archived.push(updateId);
      }

      await eventually(
        () =>
          seen.grammy.length >= expected.grammy.length &&
          seen.telegraf.length >= expected.telegraf.length &&
          seen.ntba.length >= expected.ntba.length &&
          receiver.deliveries.filter((d) => d.path === '/archive').length >= archived.length
            ? true
            : undefined,
        {
          what: 'every framework has its updates and the push route its own',
          timeoutMs: 120_000,
          retryErrors: true,
        },
      );
      expect(errors).toEqual([]);
      expect(seen).toEqual(expected);
      const pushed = receiver.deliveries
        .filter((d) => d.path === '/archive')
        .map((d) => (d.json as { update_id: number }).update_id);
      expect(pushed.sort((a, b) => a - b)).toEqual(archived);

      const replies = () =>
        emulator
          .sent(shop.id, { method: 'sendMessage' })
          .map((call) => String(call.params['text']));
      const wanted = [
        ...expected.grammy.map((id) => `grammy ${id}`),
        ...expected.telegraf.map((id) => `telegraf ${id}`),
        ...expected.ntba.map((id) => `ntba ${id}`),
      ].sort();
      await eventually(() => (replies().length >= wanted.length ? true : undefined), {
        what: 'every reply reached Telegram',
        timeoutMs: 60_000,
        retryErrors: true,
      });
      expect(replies().sort()).toEqual(wanted);
      // The real bot's update stream was never touched.
      for (const method of ['getUpdates', 'deleteWebhook', 'setWebhook'])
        expect(emulator.calls(shop.id, { method })).toEqual([]);
    } finally {
      await ntba.stopPolling({ cancel: true });
      telegraf.stop('test over');
      await grammy.stop();
      await Promise.all([grammyStopped, telegrafStopped]);
    }
  }, 240_000);

  it('a polling bot killed mid-batch loses nothing: a new process gets what was not confirmed', async () => {
    const sent: number[] = [];
    for (let i = 0; i < 30; i++) {
      const updateId = 9500 + i;
      await webhook(update(updateId, 'order'));
      sent.push(updateId);
    }
    const env = { TOKEN: `${shop.id}:${TOKENS.grammy}`, API_ROOT: app.url };
    const first = startPollingBot({ ...env, KILL_AFTER: '10' });
    await new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(first.handled).toEqual(sent.slice(0, 10));

    // More arrive while no bot runs.
    for (let i = 30; i < 35; i++) {
      const updateId = 9500 + i;
      await webhook(update(updateId, 'order'));
      sent.push(updateId);
    }
    const second = startPollingBot(env);
    try {
      await eventually(() => (second.handled.length >= sent.length ? true : undefined), {
        what: 'the new process to get every update',
        timeoutMs: 30_000,
        retryErrors: true,
      });
      // The killed batch was never confirmed: all of it comes again, then the rest.
      expect(second.handled).toEqual(sent);
    } finally {
      await killHard(second.child);
    }
  }, 90_000);

  it('Relaygram killed with SIGKILL while a bot polls it and started again: nothing lost, in order', async () => {
    const port = await freePort();
    const env: Record<string, string> = {
      RELAYGRAM_CONFIG: config.path,
      PORT: String(port),
      ADMIN_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      SHOP_TOKEN: shop.token,
      SHOP_SECRET,
      GRAMMY_TOKEN: TOKENS.grammy,
      TELEGRAF_TOKEN: TOKENS.telegraf,
      NTBA_TOKEN: TOKENS.ntba,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    };
    const url = `http://127.0.0.1:${port}`;
    const serving = () =>
      eventually(
        async () => {
          const res = await request(`${url}/bot${shop.id}:${TOKENS.grammy}/getMe`);
          await res.body.dump();
          return res.statusCode === 200 ? true : undefined;
        },
        {
          what: 'the Relaygram process to serve the drop-in',
          timeoutMs: 60_000,
          retryErrors: true,
        },
      );
    let relaygram = spawnRelaygram(env);
    const sent: number[] = [];
    // Accepted by the in-process app's webhook; the killed process is the one the bot polls.
    const send = async (from: number, count: number) => {
      for (let updateId = from; updateId < from + count; updateId++) {
        await webhook(update(updateId, 'order'));
        sent.push(updateId);
      }
    };
    let bot: BotProcess | undefined;
    try {
      await serving();
      bot = startPollingBot({ TOKEN: `${shop.id}:${TOKENS.grammy}`, API_ROOT: url });
      const ours = () => bot!.handled.filter((id) => id >= 9600);
      await send(9600, 20);
      await eventually(() => (ours().length >= 5 ? true : undefined), {
        what: 'the bot to handle some',
        retryErrors: true,
      });
      await killHard(relaygram);
      await send(9620, 20);
      relaygram = spawnRelaygram(env);
      await serving();
      await send(9640, 10);
      await eventually(() => (new Set(ours()).size >= sent.length ? true : undefined), {
        what: 'the bot to get every update',
        timeoutMs: 60_000,
        retryErrors: true,
      });
      // At least once: a batch the kill kept from being confirmed may come twice; first
      // arrivals are every update, in acceptance order.
      expect([...new Set(ours())]).toEqual(sent);
    } finally {
      if (bot) await killHard(bot.child);
      await killHard(relaygram);
    }
  }, 180_000);
});
