import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type DynamicModule } from '@nestjs/common';
import { loadConfigOrThrow, type RelaygramConfig } from '@relaygram/config';
import { laneId } from '@relaygram/contracts';
import { DispatcherModule, type DispatcherModuleOptions } from '@relaygram/dispatcher';
import { CoreModule, startApp, type RunningApp } from '@relaygram/platform';
import { newDeliveryId } from '@relaygram/queue';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { laneKeyFor, selectRoutes, type Update } from '@relaygram/routing';
import {
  generateToken,
  parsedLogs,
  RecordingReceiver,
  redisUrl,
  type LogLine,
} from '@relaygram/testing';

@Module({})
class DispatcherTestRoot {}

export interface EnqueuedUpdate {
  updateId: number;
  deliveries: { route: string; lane: string; deliveryId: string }[];
}

/** A message update of one chat; update_ids are chosen by the test. */
export function messageUpdate(updateId: number, chatId = 1, text = `#${updateId}`): Update {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat: { id: chatId, type: chatId < 0 ? 'group' : 'private' },
      from: { id: Math.abs(chatId), is_bot: false, first_name: 'T' },
      text,
    },
  };
}

/**
 * One test file's world: a Redis key prefix of its own (the queue fixture), a config
 * file naming it, dispatchers started in this process on that config, and an enqueue
 * that places deliveries exactly as ingress does (selectRoutes + laneKeyFor).
 */
export class DispatcherHarness {
  readonly dir: string;
  readonly env: Record<string, string> = {};
  readonly logs: LogLine[] = [];
  readonly configPath: string;
  private readonly apps = new Set<RunningApp>();
  private config?: RelaygramConfig;

  private constructor(
    readonly fixture: QueueFixture,
    readonly bots: Record<string, string>,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'relaygram-dispatcher-'));
    this.configPath = join(this.dir, 'relaygram.yaml');
    for (const [bot, token] of Object.entries(bots)) this.env[tokenEnv(bot)] = token;
  }

  /** `bots` are the bot ids of the config, each given a realistic token. */
  static async create(name: string, bots: string[] = ['bot-a']): Promise<DispatcherHarness> {
    const fixture = await createQueueFixture(name);
    return new DispatcherHarness(
      fixture,
      Object.fromEntries(bots.map((bot) => [bot, generateToken()])),
    );
  }

  get prefix(): string {
    return this.fixture.prefix;
  }

  /**
   * Writes the config: redis prefix and bots are filled in; `routes` is the YAML of the
   * routes list (and anything after it). Secrets go to `env` under their names.
   */
  writeConfig(
    routes: string,
    options: { apiBase?: string; secrets?: Record<string, string> } = {},
  ): void {
    Object.assign(this.env, options.secrets ?? {});
    const bots = Object.keys(this.bots)
      .map((bot) => `  - { id: ${bot}, token_env: ${tokenEnv(bot)}, mode: polling }`)
      .join('\n');
    writeFileSync(
      this.configPath,
      [
        'redis:',
        `  url: ${redisUrl()}`,
        `  prefix: ${this.prefix}`,
        'telegram:',
        `  api_base: ${options.apiBase ?? 'http://127.0.0.1:9'}`,
        'bots:',
        bots,
        routes.trim(),
        '',
      ].join('\n'),
    );
    this.config = loadConfigOrThrow({
      path: this.configPath,
      env: { ...this.env, REDIS_URL: redisUrl() },
    });
  }

  /** Environment of a dispatcher process on this config. */
  processEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PORT: '0',
      ADMIN_PORT: '0',
      REDIS_URL: redisUrl(),
      RELAYGRAM_CONFIG: this.configPath,
      LOG_LEVEL: 'info',
      ...this.env,
      ...extra,
    };
  }

  /**
   * A dispatcher in this process; its log lines are parsed into `logs`, each tagged with
   * `instance` (the name given here) to tell several dispatchers apart.
   */
  async start(options: DispatcherModuleOptions = {}, instance = 'a'): Promise<RunningApp> {
    const { stream } = parsedLogs(this.logs, { instance });
    const running = await startApp(
      {
        service: 'dispatcher',
        module: (boot): DynamicModule => ({
          module: DispatcherTestRoot,
          imports: [CoreModule.forRoot(boot), DispatcherModule.forRoot(options)],
        }),
      },
      { env: this.processEnv(), signals: false, logDestination: stream },
    );
    this.apps.add(running);
    return running;
  }

  async stop(running: RunningApp): Promise<void> {
    this.apps.delete(running);
    await running.close();
  }

  /** Enqueues an update from `bot` for every route that matches it, as ingress would. */
  async enqueue(update: Update, bot = 'bot-a', acceptedAt?: number): Promise<EnqueuedUpdate> {
    if (!this.config) throw new Error('writeConfig first');
    const deliveries = selectRoutes(this.config, bot, update).map((route) => {
      const deliveryId = newDeliveryId();
      return {
        route: route.name,
        deliveryId,
        lane: laneId(route.name, bot, laneKeyFor(route.ordering, update, deliveryId)),
      };
    });
    const result = await this.fixture.enqueuer.enqueue({
      bot,
      updateId: update.update_id,
      body: Buffer.from(JSON.stringify(update)),
      deliveries,
      acceptedAt,
    });
    if (result.status !== 'queued')
      throw new Error(`update ${update.update_id} was ${result.status}`);
    return { updateId: update.update_id, deliveries };
  }

  logsMatching(msg: string): LogLine[] {
    return this.logs.filter((line) => line.msg === msg);
  }

  async cleanup(): Promise<void> {
    for (const running of [...this.apps]) await this.stop(running);
    await this.fixture.cleanup();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A harness (`name`) and a receiver for each test of a file, cleaned up after it: `use`
 * hands them to the spec, `beforeCleanup` stops what the test started on top of them.
 */
export function harnessEachTest(
  name: string,
  use: (harness: DispatcherHarness, receiver: RecordingReceiver) => void,
  beforeCleanup: (harness: DispatcherHarness) => unknown = () => undefined,
): void {
  let harness: DispatcherHarness;
  let receiver: RecordingReceiver;
  beforeEach(async () => {
    harness = await DispatcherHarness.create(name);
    receiver = await RecordingReceiver.start();
    use(harness, receiver);
  });
  afterEach(async () => {
    await beforeCleanup(harness);
    await harness.cleanup();
    await receiver.stop();
  });
}

function tokenEnv(bot: string): string {
  return `${bot.toUpperCase().replace(/-/g, '_')}_TOKEN`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
