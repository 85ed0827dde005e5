import { randomBytes } from 'node:crypto';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigOrThrow, type RelaygramConfig } from '@relaygram/config';
import { RedisKeys } from '@relaygram/contracts';
import { createRedis, type RelaygramRedis } from '@relaygram/queue';
import { TelegramEmulator, type BotIdentity, stablePort } from '@relaygram/testing';
import { request } from 'undici';
import { stringify } from 'yaml';
import { AppSlot, sleep, type AppName } from './app-process';
import { DrainJobs } from './drain-jobs';
import { AuditedReceiver } from './audited-receiver';
import {
  configDocument,
  describeVariant,
  waitForReload,
  LATE_ROUTE,
  POLL_BOT,
  receiverSecurity,
  ROUTES,
  type ConfigVariant,
  type ReceiverName,
} from './chaos-config';
import { RedisProcess } from './redis-process';
import { TcpProxy } from './tcp-proxy';

export const INGRESS_SLOTS = ['ingress-a', 'ingress-b'] as const;
export const DISPATCHER_SLOTS = ['dispatcher-a', 'dispatcher-b'] as const;
export {
  HOOK_BOT,
  LATE_ROUTE,
  POLL_BOT,
  ROUTES,
  type ConfigVariant,
  type ReceiverName,
  type RouteName,
} from './chaos-config';

/** When a reload was asked for, and when every process had logged it applied. */
export interface ReloadWindow {
  /** The first SIGHUP. */
  start: number;
  /** The moment the last process's "config reloaded" line was read from its log. */
  end: number;
  /** Per slot, from its SIGHUP to its line being read. */
  perSlot: { slot: string; ms: number }[];
}

export interface ClusterOptions {
  root: string;
  runDir: string;
  logLevel: string;
}

export interface SecretEntry {
  name: string;
  value: string;
}

export const secret = (): string => randomBytes(24).toString('base64url');

/**
 * The install under test, all on loopback: a private redis-server (AOF everysec), two
 * ingress, two dispatchers and a gateway as child processes from their dist, the
 * Telegram emulator and one recording receiver per route in this process, a TCP load
 * balancer in front of the ingress slots (Telegram's webhook goes through it) and a TCP
 * proxy in front of the `side` receiver.
 */
export class ChaosCluster {
  readonly ingress: AppSlot[] = [];
  readonly dispatchers: AppSlot[] = [];
  gateway!: AppSlot;
  redis!: RedisProcess;
  emulator!: TelegramEmulator;
  hookBot!: BotIdentity;
  pollBot!: BotIdentity;
  balancer!: TcpProxy;
  sideProxy!: TcpProxy;
  /** The config the apps run now (a scenario may reload another). */
  config!: RelaygramConfig;
  inspect!: RelaygramRedis;
  keys!: RedisKeys;
  readonly receivers = new Map<ReceiverName, AuditedReceiver>();
  /** Every route some config of this run had: their lanes are counted until drained. */
  readonly routeNames = new Set<string>(ROUTES);
  drainJobs!: DrainJobs;
  private configPath = '';
  private variantKey = '{}';
  /** Every secret of the install, by env var name: grepped for in every output. */
  readonly secrets: SecretEntry[] = [];
  readonly env: Record<string, string> = {};
  adminToken = secret();
  clientToken = secret();
  private readonly responsesLog: string;

  constructor(readonly options: ClusterOptions) {
    this.responsesLog = join(options.runDir, 'responses.log');
  }

  get slots(): AppSlot[] {
    return [...this.ingress, ...this.dispatchers, this.gateway];
  }

  async start(log: (line: string) => void): Promise<void> {
    const { runDir } = this.options;
    this.redis = await RedisProcess.create(join(runDir, 'redis-data'), join(runDir, 'redis.log'));
    await this.redis.start();
    log(`redis-server on ${this.redis.url}, AOF everysec in ${this.redis.dataDir}`);
    this.emulator = await TelegramEmulator.start({
      // The audits read the calls back: outbox-faults alone makes 10,000 sends, and the
      // service traffic calls the same bot meanwhile.
      historyLimit: 100_000,
      webhookRetryDelayMs: 100,
      webhookMaxRetryDelayMs: 1_000,
      webhookTimeoutMs: 30_000,
    });
    this.hookBot = this.emulator.addBot({ username: 'chaos_hook_bot' });
    this.pollBot = this.emulator.addBot({ username: 'chaos_poll_bot' });
    const ingressPorts = [await stablePort(), await stablePort()];
    this.balancer = await TcpProxy.start(ingressPorts);
    this.createSecrets();
    await this.startReceivers();
    this.writeConfig();
    await this.startSlots(ingressPorts);
    log(
      `started ${this.slots.map((s) => `${s.name} (pid ${s.pid})`).join(', ')}; ` +
        `emulator ${this.emulator.apiRoot}`,
    );
    await this.waitWebhookSet();
  }

  /** Every secret of the install into the apps' env, and into the list grepped for leaks. */
  private createSecrets(): void {
    const put = (name: string, value: string) => {
      this.env[name] = value;
      this.secrets.push({ name, value });
    };
    put('CHAOS_HOOK_BOT_TOKEN', this.hookBot.token);
    put('CHAOS_POLL_BOT_TOKEN', this.pollBot.token);
    put('CHAOS_HOOK_WEBHOOK_SECRET', secret());
    put('CHAOS_MAIN_SIGNING_SECRET', secret());
    put('CHAOS_COMMANDS_SIGNING_SECRET', secret());
    put('CHAOS_SIDE_SIGNING_SECRET', secret());
    put('CHAOS_LATE_SIGNING_SECRET', secret());
    const whsec = randomBytes(32).toString('base64');
    put('CHAOS_STRICT_SIGNING_SECRET', `whsec_${whsec}`);
    put('CHAOS_COMMANDS_SERVICE_TOKEN', secret());
    put('CHAOS_SPREAD_TELEGRAM_SECRET', secret());
    put('CHAOS_CLIENT_TOKEN', this.clientToken);
    put('ADMIN_TOKEN', this.adminToken);
    // The parts of a secret that could leak on their own.
    for (const bot of [this.hookBot, this.pollBot]) {
      this.secrets.push({
        name: `${bot.username} token (secret half)`,
        value: bot.token.slice(bot.token.indexOf(':') + 1),
      });
    }
    this.secrets.push({ name: 'CHAOS_STRICT_SIGNING_SECRET (key)', value: whsec });
  }

  /** One recording receiver per route, `late` included, and the proxy in front of `side`'s. */
  private async startReceivers(): Promise<void> {
    const allSecrets = this.secrets.map((s) => s.value);
    for (const route of [...ROUTES, LATE_ROUTE] as const) {
      this.receivers.set(
        route,
        await AuditedReceiver.start(
          route,
          { ...receiverSecurity(route, this.env), secrets: allSecrets },
          await stablePort(),
        ),
      );
    }
    this.sideProxy = await TcpProxy.start([this.receiver('side').port]);
  }

  /** The config file of the start, read back the way the apps read it, and Redis to inspect. */
  private writeConfig(): void {
    const configPath = join(this.options.runDir, 'relaygram.yaml');
    this.configPath = configPath;
    writeFileSync(configPath, stringify(this.configDocument()));
    this.config = this.loadConfig(configPath);
    this.keys = new RedisKeys(this.config.redis.prefix);
    this.inspect = createRedis(this.redis.url, { connectionName: 'chaos-inspect' });
    this.drainJobs = new DrainJobs(this.inspect, this.keys);
  }

  /** Two ingress (on the balancer's ports), two dispatchers and a gateway, all started. */
  private async startSlots(ingressPorts: number[]): Promise<void> {
    const { runDir } = this.options;
    const appEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      RELAYGRAM_CONFIG: this.configPath,
      REDIS_URL: this.redis.url,
      TELEGRAM_API_BASE: this.emulator.apiRoot,
      LOG_LEVEL: this.options.logLevel,
      ...this.env,
    };
    const slot = async (app: AppName, name: string, port?: number) =>
      new AppSlot({
        app,
        name,
        root: this.options.root,
        port: port ?? (await stablePort()),
        adminPort: await stablePort(),
        env: appEnv,
        logPath: join(runDir, `${name}.log`),
      });
    this.ingress.push(
      await slot('ingress', INGRESS_SLOTS[0], ingressPorts[0]),
      await slot('ingress', INGRESS_SLOTS[1], ingressPorts[1]),
    );
    this.dispatchers.push(
      await slot('dispatcher', DISPATCHER_SLOTS[0]),
      await slot('dispatcher', DISPATCHER_SLOTS[1]),
    );
    this.gateway = await slot('gateway', 'gateway');
    await Promise.all(this.slots.map((s) => s.start()));
  }

  receiver(route: ReceiverName): AuditedReceiver {
    const receiver = this.receivers.get(route);
    if (!receiver) throw new Error(`no receiver for ${route}`);
    return receiver;
  }

  private loadConfig(path: string): RelaygramConfig {
    return loadConfigOrThrow({ path, env: { ...this.env, REDIS_URL: this.redis.url } });
  }

  /**
   * Rewrites the config file to `variant` and sends SIGHUP to every running process, one
   * after the other in a random order with a random gap (replicas reload at slightly
   * different moments, as with a config map and a rolling signal), then waits until each
   * has logged the reload applied. Throws when a process refuses it or does not apply it.
   */
  async reload(variant: ConfigVariant, log: (line: string) => void): Promise<ReloadWindow> {
    const start = Date.now();
    const path = this.configPath;
    // Written whole, then renamed: a process never reads half a file.
    writeFileSync(`${path}.next`, stringify(this.configDocument(variant)));
    renameSync(`${path}.next`, path);
    this.config = this.loadConfig(path);
    this.variantKey = JSON.stringify(variant);
    for (const route of this.config.routes) this.routeNames.add(route.name);
    const slots = this.slots.filter((s) => s.running).sort(() => Math.random() - 0.5);
    const waits: Promise<{ slot: string; ms: number }>[] = [];
    for (const slot of slots) {
      const offset = slot.logSize();
      const sent = Date.now();
      slot.signal('SIGHUP');
      waits.push(waitForReload(slot, offset, sent));
      await sleep(Math.random() * 250);
    }
    const perSlot = await Promise.all(waits);
    const window = { start, end: Date.now(), perSlot };
    log(
      `config reloaded (${describeVariant(variant)}) in ${window.end - window.start} ms: ` +
        perSlot.map((p) => `${p.slot} ${p.ms} ms after its SIGHUP`).join(', '),
    );
    return window;
  }

  /**
   * Readies the install for a scenario: the config of the start again (if one was
   * reloaded), no process paused, and each slot running with the RELAYGRAM_FAULTS the
   * scenario asks for it (by slot name; none for the others). A slot whose running
   * process has other faults is restarted (SIGTERM, start), all at once: no load runs.
   */
  async prepare(
    faults: Readonly<Record<string, string>>,
    log: (line: string) => void,
  ): Promise<void> {
    if (this.variantKey !== '{}') await this.reload({}, log);
    await Promise.all(
      this.slots.map(async (slot) => {
        const wanted = faults[slot.name];
        slot.faults = wanted;
        if (slot.running && slot.paused) slot.signal('SIGCONT');
        if (slot.running && slot.runningFaults !== wanted) {
          await slot.restart();
          log(`${slot.name} restarted with RELAYGRAM_FAULTS=${wanted ?? '(none)'}`);
        }
      }),
    );
  }

  private configDocument(variant: ConfigVariant = {}): Record<string, unknown> {
    return configDocument(
      {
        redisUrl: this.redis.url,
        apiRoot: this.emulator.apiRoot,
        hookBot: this.hookBot,
        pollBot: this.pollBot,
        balancerUrl: this.balancer.url,
        target: (route) =>
          route === 'side'
            ? `${this.sideProxy.url}/telegram/${route}`
            : `${this.receiver(route).url}/telegram/${route}`,
      },
      variant,
    );
  }

  /** Ingress sets the webhook (manage: true) at start; the load needs it in place. */
  private async waitWebhookSet(): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (this.emulator.webhookInfo(this.hookBot.id).url === '') {
      if (Date.now() > deadline) throw new Error('ingress did not set the webhook in 30 s');
      await sleep(100);
    }
  }

  /** Starts whatever a scenario left stopped, and waits until all of it is live. */
  async ensureRunning(): Promise<void> {
    if (!this.redis.running) await this.redis.start();
    for (const receiver of this.receivers.values()) await receiver.bringUp();
    this.sideProxy.setMode('pass');
    await Promise.all(this.slots.map((s) => (s.running ? undefined : s.start())));
  }

  /**
   * The ingress slot whose process holds the polling bot's lease. /healthz cannot tell:
   * every replica reports the bot's shared state. The lease value is the holder's token,
   * `<hostname>:<pid>:<random>`.
   */
  async pollingIngress(): Promise<AppSlot | undefined> {
    const token = await this.inspect.get(this.keys.pollerLease(POLL_BOT)).catch(() => null);
    const pid = Number(token?.split(':')[1]);
    return this.ingress.find((slot) => slot.running && slot.pid === pid);
  }

  /** Non-empty lanes left in Redis, all routes together; undefined while Redis is away. */
  async lanesLeft(): Promise<number | undefined> {
    try {
      const counts = await Promise.all(
        [...this.routeNames].map((route) => this.inspect.scard(this.keys.routeLanes(route))),
      );
      return counts.reduce((a, b) => a + b, 0);
    } catch {
      return undefined;
    }
  }

  pendingAtTelegram(): number {
    return (
      this.emulator.pendingUpdates(this.hookBot.id).length +
      this.emulator.pendingUpdates(this.pollBot.id).length
    );
  }

  async getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
    const res = await request(url, { headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    this.record(
      `GET ${redactUrl(url)} -> ${res.statusCode} ${JSON.stringify(res.headers)} ${text}`,
    );
    if (res.statusCode >= 400) throw new Error(`GET ${redactUrl(url)}: ${res.statusCode}`);
    return JSON.parse(text) as unknown;
  }

  /** Every answer the run read from Relaygram is kept, and grepped for secrets at the end. */
  record(line: string): void {
    appendFileSync(this.responsesLog, `${line.slice(0, 4000)}\n`);
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.slots.map((s) => s.stop()));
    await this.drainJobs?.close();
    await this.inspect?.quit().catch(() => this.inspect.disconnect());
    await Promise.allSettled([
      this.balancer?.stop(),
      this.sideProxy?.stop(),
      ...[...this.receivers.values()].map((r) => r.stop()),
    ]);
    await this.emulator?.stop();
    await this.redis?.stop();
  }
}

/** The drop-in path holds a client token: the responses log shows the bot id only. */
function redactUrl(url: string): string {
  return url.replace(/\/bot(\d+):[^/]+/, '/bot$1:***');
}
