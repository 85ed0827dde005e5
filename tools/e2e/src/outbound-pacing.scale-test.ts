import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type LocalRedis } from '@relaygram/queue';
import {
  EmulatorControlClient,
  RecordingReceiver,
  type AddBotOptions,
  type BotIdentity,
  stablePort,
} from '@relaygram/testing';
import { request } from 'undici';
import { AppProcess, REPO, stopAll } from './support/app-process';

/** Telegram's limits (TELEGRAM.md), the same in the config and in the emulator. */
const PER_SECOND = 30;
const PER_CHAT = 1;
const BURST = 3;
const PER_GROUP_MINUTE = 20;
const MAX_WAIT_MS = 5_000;

const PRIVATE_CHATS = Array.from({ length: 40 }, (_, i) => 8_001 + i);
const GROUP_CHATS = Array.from({ length: 10 }, (_, i) => -1_008_001 - i);
const CHATS = [...PRIVATE_CHATS, ...GROUP_CHATS];
const RUN_MS = 30_000;
/** Ten times the bot's limit, spread over the 50 chats (six times each chat's). */
const CALLS_PER_SECOND = 10 * PER_SECOND;
/** Updates whose target answers with a sendMessage webhook reply, run by the dispatcher. */
const UPDATES_PER_SECOND = 20;

interface Call {
  gateway: number;
  path: 'rest' | 'drop-in';
  chat: number;
  text: string;
  start: number;
  end: number;
  status: number;
  body: string;
  retryAfterHeader?: string;
}

/** The built emulator as a process of its own: its clock is not the load generator's. */
interface EmulatorProcess {
  child: ChildProcess;
  apiRoot: string;
  control: EmulatorControlClient;
  bots: BotIdentity[];
}

async function startEmulatorProcess(bots: AddBotOptions[]): Promise<EmulatorProcess> {
  const main = join(REPO, 'libs', 'testing', 'dist', 'emulator.main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const child = spawn(
    process.execPath,
    [main, JSON.stringify({ bots, historyLimit: 100_000, messageLimit: 20_000 })],
    {
      env: { PATH: process.env.PATH ?? '', PORT: String(await stablePort()), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end !== -1) resolve(out.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
  });
  const started = JSON.parse(line) as { apiRoot: string; controlUrl: string; bots: BotIdentity[] };
  return {
    child,
    apiRoot: started.apiRoot,
    control: new EmulatorControlClient(started.controlUrl),
    bots: started.bots,
  };
}

/**
 * The Done-when of outbound pacing, on the built apps: three gateway replicas and a
 * dispatcher running webhook replies send for one bot to 50 chats at ten times
 * Telegram's limits for 30 s. The emulator, which enforces those limits on its own
 * clock (in its own process, so the load generator's work never bends it), never
 * answers 429; its record shows every limit held; every call either went out within
 * max_wait or was answered Telegram's 429 and nothing else.
 */
describe('outbound pacing: 3 gateways and a dispatcher, one bot, 50 chats at 10x the limits', () => {
  let redis: LocalRedis;
  let emulator: EmulatorProcess;
  let receiver: RecordingReceiver;
  let dir: string;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startEmulatorProcess([
      {
        username: 'paced_bot',
        floodLimits: {
          perSecond: PER_SECOND,
          perChatPerSecond: PER_CHAT,
          chatBurst: BURST,
          perGroupPerMinute: PER_GROUP_MINUTE,
        },
      },
    ]);
    receiver = await RecordingReceiver.start();
    dir = mkdtempSync(join(tmpdir(), 'relaygram-pacing-'));
  }, 60_000);

  afterAll(async () => {
    await stopAll(apps);
    await receiver?.stop();
    if (emulator) {
      const exited = new Promise((resolve) => emulator.child.once('exit', resolve));
      emulator.child.kill('SIGTERM');
      await exited;
    }
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('holds every limit on Telegram’s clock, with no 429 from it', async () => {
    const bot = emulator.bots[0] as BotIdentity;
    const client = randomBytes(24).toString('base64url');
    const env = {
      RELAYGRAM_CONFIG: join(dir, 'relaygram.yaml'),
      REDIS_URL: redis.url,
      TELEGRAM_API_BASE: emulator.apiRoot,
      PACED_BOT_TOKEN: bot.token,
      SITE_TOKEN: client,
    };
    writeFileSync(
      env.RELAYGRAM_CONFIG,
      `redis:
  prefix: paced-${randomBytes(4).toString('hex')}
bots:
  - id: paced-bot
    token_env: PACED_BOT_TOKEN
    mode: polling
    outbound:
      per_second: ${PER_SECOND}
      per_chat_per_second: ${PER_CHAT}
      chat_burst: ${BURST}
      per_group_per_minute: ${PER_GROUP_MINUTE}
      max_wait: ${MAX_WAIT_MS / 1000}s
routes:
  - name: replies
    target_url: ${receiver.url}/updates
    service_token_env: SITE_TOKEN
clients:
  - name: site
    token_env: SITE_TOKEN
    bots: [paced-bot]
`,
    );
    // The target answers every update with a reply to its chat, as Telegraf bots do.
    receiver.respondWith((delivery) => {
      const update = delivery.json as { update_id: number; message: { chat: { id: number } } };
      return {
        status: 200,
        body: {
          method: 'sendMessage',
          chat_id: update.message.chat.id,
          text: `reply to ${update.update_id}`,
        },
      };
    });

    apps.push(await AppProcess.start('ingress', env, { name: 'ingress' }));
    apps.push(await AppProcess.start('dispatcher', env, { name: 'dispatcher' }));
    for (const name of ['gateway-1', 'gateway-2', 'gateway-3']) {
      apps.push(await AppProcess.start('gateway', env, { name }));
    }
    const gateways = apps.filter((app) => app.name.startsWith('gateway'));
    const dispatcher = apps.find((app) => app.name === 'dispatcher') as AppProcess;

    try {
      await Promise.all(apps.map((app) => app.ready(90_000)));
      const calls = await offerLoad(gateways, bot, client);
      const replies = await dispatcherReplies(dispatcher);

      const sent = await emulator.control.sent(bot.id, { method: 'sendMessage' });
      const flood = await emulator.control.floodStats(bot.id);
      const accepted = sent.filter((c) => c.status === 200);
      const summary = {
        offered: calls.length,
        gatewaySent: calls.filter((c) => c.status === 200).length,
        gatewayRefused: calls.filter((c) => c.status !== 200).length,
        replies,
        telegramAccepted: accepted.length,
        telegram429: flood?.limited,
        limitedBy: flood?.limitedBy,
        slowestSentMs: Math.max(
          ...calls.filter((c) => c.status === 200).map((c) => c.end - c.start),
        ),
      };
      process.stdout.write(`outbound pacing: ${JSON.stringify(summary)}\n`);
      for (const limited of sent.filter((c) => c.status === 429).slice(0, 10)) {
        const chat = limited.params['chat_id'];
        const around = sent
          .filter((c) => c.params['chat_id'] === chat && Math.abs(c.time - limited.time) < 3_000)
          .map((c) => `${c.time - limited.time}:${c.status}`);
        process.stdout.write(`  429 for chat ${String(chat)}: ${around.join(' ')}\n`);
      }

      // Telegram's side: not one 429, and nothing but 200s.
      expect(flood).toMatchObject({ limited: 0 });
      expect(sent.filter((c) => c.status !== 200)).toEqual([]);
      // The budget was used, not merely refused: most of what the bot may send in 30 s.
      expect(accepted.length).toBeGreaterThan(0.5 * PER_SECOND * (RUN_MS / 1000));
      expect(replies.ok).toBeGreaterThan(0);

      // The limits on the emulator's clock, checked apart from its own counting.
      const times = accepted.map((c) => c.time);
      expect(maxInWindow(times, 1_000)).toBeLessThanOrEqual(2 * PER_SECOND);
      expect(maxInWindow(times, 10_000)).toBeLessThanOrEqual(PER_SECOND + 10 * PER_SECOND);
      for (const chat of CHATS) {
        const own = accepted.filter((c) => c.params['chat_id'] === chat).map((c) => c.time);
        expect({ chat, max1s: maxInWindow(own, 1_000) <= BURST + PER_CHAT }).toEqual({
          chat,
          max1s: true,
        });
        expect({ chat, max10s: maxInWindow(own, 10_000) <= BURST + 10 * PER_CHAT }).toEqual({
          chat,
          max10s: true,
        });
        expect({ chat, conforms: bucketConforms(own, 1000 / PER_CHAT, BURST) }).toEqual({
          chat,
          conforms: true,
        });
        if (chat < 0) {
          expect({ chat, max60s: maxInWindow(own, 60_000) <= PER_GROUP_MINUTE }).toEqual({
            chat,
            max60s: true,
          });
        }
      }
      expect(bucketConforms(times, 1000 / PER_SECOND, PER_SECOND)).toBe(true);

      // The callers' side: each call went out within max_wait, or got the 429 and nothing else.
      const byText = new Set(accepted.map((c) => String(c.params['text'])));
      for (const call of calls) {
        if (call.status === 200) {
          expect({ text: call.text, arrived: byText.has(call.text) }).toEqual({
            text: call.text,
            arrived: true,
          });
          // Its slot within max_wait (the pacer never sends later); the rest is the
          // round trip through a loaded machine.
          expect(call.end - call.start).toBeLessThan(MAX_WAIT_MS + 3_000);
          continue;
        }
        expect({ text: call.text, arrived: byText.has(call.text) }).toEqual({
          text: call.text,
          arrived: false,
        });
        expectTooManyRequests(call);
      }
    } catch (error) {
      for (const app of apps) {
        process.stderr.write(
          `--- ${app.name} (${app.running ? 'running' : 'exited'})\n${app.output().slice(-3000)}\n`,
        );
      }
      throw error;
    }
  }, 240_000);

  /**
   * An open-loop load: CALLS_PER_SECOND calls spread over the chats and the three
   * gateways (REST and the drop-in by turns), and UPDATES_PER_SECOND updates whose
   * replies the dispatcher sends, for RUN_MS; then every call's answer.
   */
  async function offerLoad(gateways: AppProcess[], bot: BotIdentity, client: string) {
    const calls: Promise<Call>[] = [];
    const injected: Promise<unknown>[] = [];
    const started = Date.now();
    let n = 0;
    let updates = 0;
    while (Date.now() - started < RUN_MS) {
      const due = Math.floor(((Date.now() - started) / 1000) * CALLS_PER_SECOND);
      while (n < due) {
        const chat = CHATS[n % CHATS.length] as number;
        const gateway = n % gateways.length;
        calls.push(
          send(gateways[gateway] as AppProcess, gateway, n % 2 === 0 ? 'rest' : 'drop-in', chat, n),
        );
        n++;
      }
      const dueUpdates = Math.floor(((Date.now() - started) / 1000) * UPDATES_PER_SECOND);
      while (updates < dueUpdates) {
        const chat = CHATS[(updates * 7) % CHATS.length] as number;
        injected.push(
          emulator.control.message(bot.id, {
            chatId: chat,
            userId: Math.abs(chat) % 1_000_000,
            chatType: chat < 0 ? 'supergroup' : 'private',
            text: `update ${updates}`,
          }),
        );
        updates++;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(injected);
    return Promise.all(calls);

    async function send(
      app: AppProcess,
      gateway: number,
      path: Call['path'],
      chat: number,
      i: number,
    ): Promise<Call> {
      const text = `call ${i}`;
      const url =
        path === 'rest'
          ? `${app.url}/api/v1/paced-bot/messages/send`
          : `${app.url}/bot${bot.id}:${client}/sendMessage`;
      const start = Date.now();
      const res = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(path === 'rest' ? { 'x-service-token': client } : {}),
        },
        body: JSON.stringify({ chat_id: chat, text }),
      });
      const body = await res.body.text();
      const header = res.headers['retry-after'];
      return {
        gateway,
        path,
        chat,
        text,
        start,
        end: Date.now(),
        status: res.statusCode,
        body,
        ...(typeof header === 'string' ? { retryAfterHeader: header } : {}),
      };
    }
  }
});

/** Telegram's 429 exactly: its own JSON on the drop-in, its REST form (SPEC section 6). */
function expectTooManyRequests(call: Call): void {
  const body = JSON.parse(call.body) as Record<string, unknown>;
  if (call.path === 'drop-in') {
    const retryAfter = (body.parameters as { retry_after?: number } | undefined)?.retry_after;
    expect({ status: call.status, body }).toEqual({
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retryAfter}`,
        parameters: { retry_after: retryAfter },
      },
    });
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    return;
  }
  const retryAfter = body.retry_after as number;
  expect({ status: call.status, body, header: call.retryAfterHeader }).toEqual({
    status: 502,
    body: {
      error: `ETELEGRAM: 429 Too Many Requests: retry after ${retryAfter}`,
      error_code: 429,
      retry_after: retryAfter,
    },
    header: String(retryAfter),
  });
}

async function dispatcherReplies(dispatcher: AppProcess) {
  const text = await (await fetch(`${dispatcher.adminUrl}/metrics`)).text();
  const count = (outcome: string) =>
    text
      .split('\n')
      .filter(
        (line) =>
          line.startsWith('relaygram_webhook_reply_calls_total{') &&
          line.includes(`outcome="${outcome}"`),
      )
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  return { ok: count('ok'), paced: count('paced'), error: count('error') };
}

/** The most arrivals in any window of `ms`. */
function maxInWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= ms) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** Whether the arrivals fit a bucket of `capacity` refilled one per `intervalMs`. */
function bucketConforms(times: number[], intervalMs: number, capacity: number): boolean {
  let tat = Number.NEGATIVE_INFINITY;
  for (const time of [...times].sort((a, b) => a - b)) {
    if (time < tat - (capacity - 1) * intervalMs) return false;
    tat = Math.max(tat, time) + intervalMs;
  }
  return true;
}
