import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createRelaygramClient } from '@relaygram/client';
import { freePort } from '@relaygram/queue';
import type { SigningScheme } from '@relaygram/signing';
import { errorMessage } from '@relaygram/contracts';
import {
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  type Delivery,
} from '@relaygram/testing';
import { DEMO, demoConfigYaml, makeDemoSecrets, secretEnv, type DemoSecrets } from './demo-config';
import { checkDelivery } from './delivery-report';
import { deletePrefix, demoRedis } from './demo-redis';
import { StandaloneProcess } from './standalone-process';

export interface DemoOptions {
  repo: string;
  /** Keep everything running after the script, until SIGINT/SIGTERM. */
  keep: boolean;
  /** Run the standalone app from source (tests) rather than apps/standalone/dist. */
  fromSource: boolean;
  env: NodeJS.ProcessEnv;
  print: (line: string) => void;
  /** Resolves when the user asks to stop (Ctrl-C); used with `keep`. */
  stopRequested: Promise<void>;
}

const STEP_TIMEOUT_MS = 30_000;

/** Things to stop, last started first, whatever happened before. */
class Teardown {
  private readonly steps: (() => Promise<unknown> | unknown)[] = [];

  add(step: () => Promise<unknown> | unknown): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // keep stopping the rest
      }
    }
  }
}

/** What the demo runs on: Redis, the emulated Telegram with its bot, and the two services. */
interface DemoWorld {
  redisUrl: string;
  prefix: string;
  emulator: TelegramEmulator;
  bot: BotIdentity;
  secrets: DemoSecrets;
  support: RecordingReceiver;
  shop: RecordingReceiver;
  /** Deliveries a service could not verify. */
  unverified: { count: number };
}

/** Where Relaygram runs: its config file, its log's directory and its two listeners. */
interface RelaygramSite {
  dir: string;
  configPath: string;
  port: number;
  adminPort: number;
  url: string;
  adminUrl: string;
}

/** The whole demo; resolves to the exit code. */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { print } = options;
  const teardown = new Teardown();
  let standalone: StandaloneProcess | undefined;
  try {
    print('Relaygram demo: a Telegram emulator, two services and Relaygram, all on this machine.');
    const world = await startWorld(options, teardown);
    const site = await writeSite(world, teardown);
    printLayout(print, world, site);
    const child = StandaloneProcess.start({
      repo: options.repo,
      fromSource: options.fromSource,
      logFile: join(site.dir, 'standalone.log'),
      env: standaloneEnv(options, world, site),
    });
    standalone = child;
    teardown.add(() => child.stop());
    print(
      `Starting Relaygram (node apps/standalone/${options.fromSource ? 'src/main.ts' : 'dist/main.js'}, pid ${child.pid})...`,
    );
    await waitUntilReady(site.url, child);
    print(`Relaygram is ready: ${site.url}/healthz answers ok.`);
    await roundTrip(print, world, site.url);
    if (options.keep) await keepRunning(options, world, site);
    print('Stopping Relaygram...');
    const code = await child.stop();
    if (code !== 0) throw new Error(`Relaygram exited with code ${String(code)} on SIGTERM`);
    print('Stopped. Everything the demo started is gone; its Redis keys are deleted.');
    return 0;
  } catch (error) {
    print('');
    print(`Demo failed: ${errorMessage(error)}`);
    const tail = standalone?.tail();
    if (tail) print(`Relaygram's last log lines:\n${tail}`);
    return 1;
  } finally {
    await teardown.run();
  }
}

/** Redis, the emulator with the demo's bot, and the two services, each checking signatures. */
async function startWorld(options: DemoOptions, teardown: Teardown): Promise<DemoWorld> {
  const redis = await demoRedis(options.env.REDIS_URL);
  teardown.add(() => redis.stop());
  const prefix = `demo-${randomUUID().slice(0, 8)}`;
  teardown.add(() => deletePrefix(redis.url, prefix));

  const emulator = await TelegramEmulator.start();
  teardown.add(() => emulator.stop());
  const bot = emulator.addBot({ username: 'relaygram_demo_bot', firstName: 'Relaygram Demo' });
  const secrets = makeDemoSecrets(bot.token);

  const support = await RecordingReceiver.start();
  const shop = await RecordingReceiver.start();
  teardown.add(() => support.stop());
  teardown.add(() => shop.stop());
  const unverified = { count: 0 };
  const services: [RecordingReceiver, SigningScheme, string][] = [
    [support, 'relaygram-v1', secrets.supportSigningSecret],
    [shop, 'standard-webhooks', secrets.shopSigningSecret],
  ];
  for (const [receiver, scheme, secret] of services) {
    // Each service checks the signature the moment a delivery arrives, as a real one
    // would, and refuses what it cannot verify.
    receiver.respondWith((delivery: Delivery) => {
      const checked = checkDelivery(delivery, scheme, secret);
      for (const line of checked.lines) options.print(line);
      if (!checked.verified) unverified.count++;
      return { status: checked.verified ? 204 : 401 };
    });
  }
  return { redisUrl: redis.url, prefix, emulator, bot, secrets, support, shop, unverified };
}

/** The config file in a directory of the run's own, and the two ports Relaygram listens on. */
async function writeSite(world: DemoWorld, teardown: Teardown): Promise<RelaygramSite> {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-demo-'));
  teardown.add(() => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'relaygram.yaml');
  writeFileSync(
    configPath,
    demoConfigYaml({
      prefix: world.prefix,
      supportUrl: `${world.support.url}/telegram/updates`,
      shopUrl: `${world.shop.url}/hooks/telegram`,
    }),
  );
  const port = await freePort();
  const adminPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  return { dir, configPath, port, adminPort, url, adminUrl };
}

function printLayout(print: (line: string) => void, world: DemoWorld, site: RelaygramSite): void {
  const { emulator, bot, support, shop } = world;
  print('');
  print(`  Telegram (emulated)   ${emulator.apiRoot}   bot @${bot.username}`);
  print(`  service "support"     ${support.url}   gets the user's chat, signed relaygram-v1`);
  print(`  service "shop"        ${shop.url}   gets /order commands, signed standard-webhooks`);
  print(`  Relaygram             ${site.url} (public), ${site.adminUrl} (management)`);
  print(
    `  config                ${site.configPath}, Redis ${redisLabel(world.redisUrl)} under "${world.prefix}:"`,
  );
  print('');
}

/** Configured as an operator would: the config file, Redis, Telegram's address, ports and secrets. */
function standaloneEnv(
  options: DemoOptions,
  world: DemoWorld,
  site: RelaygramSite,
): Record<string, string> {
  return {
    PATH: options.env.PATH ?? '',
    RELAYGRAM_CONFIG: site.configPath,
    REDIS_URL: world.redisUrl,
    TELEGRAM_API_BASE: world.emulator.apiRoot,
    PORT: String(site.port),
    ADMIN_PORT: String(site.adminPort),
    LOG_LEVEL: 'info',
    ...secretEnv(world.secrets),
  };
}

/** The four steps of the story, each waiting for what it delivers; then /healthz. */
async function roundTrip(
  print: (line: string) => void,
  world: DemoWorld,
  url: string,
): Promise<void> {
  const { emulator, bot, secrets, support, shop } = world;
  print('');
  print(
    `1. A user sends /start to @${bot.username}; Relaygram polls it from Telegram and delivers it:`,
  );
  userSays(world, { chat: DEMO.userChat, text: '/start', firstName: 'Ada' });
  await support.waitFor(1, { timeoutMs: STEP_TIMEOUT_MS });

  print('');
  print('2. The support service answers through the gateway (it never sees the bot token):');
  print(
    `  → POST ${url}/api/v1/${DEMO.bot}/messages/send  X-Service-Token: (the ${DEMO.client} client's token)`,
  );
  const sent = await sendThroughGateway(url, secrets.serviceToken);
  print(`  ← 200, message_id ${sent.message_id}`);
  const [call] = await emulator.waitForCalls(bot.id, {
    method: 'sendMessage',
    timeoutMs: STEP_TIMEOUT_MS,
  });
  print(
    `  ✓ Telegram received sendMessage for chat ${String(call.params.chat_id)}: "${String(call.params.text)}" with a button`,
  );

  print('');
  print(
    '3. The user taps the button; the callback goes to the same service, in order after /start:',
  );
  emulator.callback(bot.id, {
    chatId: DEMO.userChat,
    userId: DEMO.userChat,
    data: 'menu:shop',
    messageId: sent.message_id,
    firstName: 'Ada',
  });
  await support.waitFor(2, { timeoutMs: STEP_TIMEOUT_MS });

  print('');
  print('4. Another user orders; /order matches the second route, which gets an envelope:');
  userSays(world, { chat: DEMO.shopperChat, text: '/order 2 t-shirts', firstName: 'Grace' });
  await shop.waitFor(1, { timeoutMs: STEP_TIMEOUT_MS });

  print('');
  const health = await getJson(`${url}/healthz`);
  print(`/healthz: ${summarizeHealth(health)}`);
  if (world.unverified.count > 0) {
    throw new Error(`${world.unverified.count} deliveries failed signature verification`);
  }
  print(`Round trip complete: ${support.count + shop.count} deliveries, every signature verified.`);
}

/** A user writes to the bot in their private chat. */
function userSays(
  { emulator, bot }: DemoWorld,
  message: { chat: number; text: string; firstName: string },
): void {
  emulator.message(bot.id, {
    chatId: message.chat,
    userId: message.chat,
    text: message.text,
    firstName: message.firstName,
  });
}

/** With --keep: what to try while everything runs, until Ctrl-C. */
async function keepRunning(
  options: DemoOptions,
  { emulator, bot, secrets }: DemoWorld,
  { adminUrl }: RelaygramSite,
): Promise<void> {
  const { print } = options;
  print('');
  print('Still running (--keep). Try:');
  print(`  admin page   ${adminUrl}/admin`);
  print(
    `  admin token  ${secrets.adminToken}   (made up for this run only; it dies with the demo)`,
  );
  print(`  metrics      ${adminUrl}/metrics`);
  print(
    `  more updates curl -X POST ${emulator.controlUrl}/bots/${bot.username}/updates/message -H 'content-type: application/json' -d '{"chatId":${DEMO.userChat},"text":"hello"}'`,
  );
  print('Press Ctrl-C to stop.');
  await options.stopRequested;
  print('');
}

async function waitUntilReady(url: string, child: StandaloneProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!child.running) throw new Error('Relaygram exited during start-up');
    try {
      const res = await fetch(`${url}/health/ready`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('Relaygram did not become ready within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The support service's reply, through @relaygram/client: the typed client of the public API. */
async function sendThroughGateway(
  url: string,
  serviceToken: string,
): Promise<{ message_id: number }> {
  const relaygram = createRelaygramClient({ baseUrl: url, serviceToken });
  const { data, error, response } = await relaygram.POST('/api/v1/{botId}/messages/send', {
    params: { path: { botId: DEMO.bot } },
    body: {
      chat_id: DEMO.userChat,
      text: 'Welcome, Ada! What would you like to do?',
      options: {
        reply_markup: {
          inline_keyboard: [[{ text: 'Open the shop', callback_data: 'menu:shop' }]],
        },
      },
    },
  });
  if (!data) {
    throw new Error(`the gateway answered ${response.status}: ${JSON.stringify(error)}`);
  }
  return { message_id: data.message_id };
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  return res.json();
}

function summarizeHealth(health: unknown): string {
  const h = health as {
    status?: string;
    bots?: { id: string; polling?: boolean; queue?: number; dead?: number }[];
  };
  const bots = (h.bots ?? [])
    .map(
      (b) => `${b.id} polling=${String(b.polling)} queue=${String(b.queue)} dead=${String(b.dead)}`,
    )
    .join('; ');
  return `${String(h.status)}; ${bots}`;
}

/** The Redis address without any credentials it may carry. */
function redisLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '(REDIS_URL)';
  }
}
