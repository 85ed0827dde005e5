import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Module, type DynamicModule } from '@nestjs/common';
import type { LogLevel } from '@relaygram/config';
import { CoreModule, startApp, type BootContext, type RunningApp } from '@relaygram/platform';
import {
  TelegramEmulator,
  testAppEnv,
  type BotIdentity,
  type TelegramEmulatorOptions,
} from '@relaygram/testing';
import { GatewayModule, type GatewayOptions } from '../src';

export interface HarnessOptions {
  gateway?: GatewayOptions;
  logLevel?: LogLevel;
  /** Leave `default: true` off every bot (the bot-less paths then answer 404). */
  noDefaultBot?: boolean;
  /** Another API base than the emulator (an unreachable port, a proxy). */
  apiBase?: (emulator: TelegramEmulator) => string | Promise<string>;
  /** Extra modules beside the gateway (a stand-in for another feature). */
  extraModules?: DynamicModule['imports'];
  emulator?: TelegramEmulatorOptions;
  /** `outbound:` keys of main-bot and other-bot (pacing), e.g. `{ per_second: 1000 }`. */
  outbound?: Record<string, string | number | boolean>;
  /** `outbound:` keys of other-bot alone, when it needs others than main-bot. */
  otherOutbound?: Record<string, string | number | boolean>;
  /** Another Redis than the tests' own (one a test stops). */
  redisUrl?: string;
  /** YAML list items under `routes:` (pull routes), indented by two spaces. */
  routes?: string[];
  /** More YAML list items under `clients:`, indented by two spaces. */
  clients?: string[];
  /** More environment (the tokens the extra clients name). */
  env?: Record<string, string>;
}

export interface GatewayHarness {
  emulator: TelegramEmulator;
  running: RunningApp;
  url: string;
  main: BotIdentity;
  other: BotIdentity;
  /** A bot the config knows but no client may use. */
  lonely: BotIdentity;
  /** May use main-bot and other-bot, every method. */
  siteToken: string;
  /** May use main-bot only, and only sendMessage and getMe. */
  narrowToken: string;
  /** Every log line written so far. */
  logs: string[];
  configPath: string;
  /** The Redis key prefix of this install. */
  prefix: string;
  /** The config file as written at start. */
  yaml: string;
  /** The environment the app was started with (tokens included). */
  env: Record<string, string | undefined>;
  /** `<numericId>:<clientToken>`, what bot frameworks take as their token. */
  dropInToken(bot: BotIdentity, clientToken?: string): string;
  /** Another gateway process of the same install: same config, Redis and emulator. */
  startReplica(): Promise<RunningApp>;
  close(): Promise<void>;
}

@Module({})
class GatewayTestModule {
  static forRoot(boot: BootContext, options: HarnessOptions): DynamicModule {
    return {
      module: GatewayTestModule,
      imports: [
        CoreModule.forRoot(boot),
        GatewayModule.forRoot(options.gateway ?? {}),
        ...(options.extraModules ?? []),
      ],
    };
  }
}

function outboundYaml(outbound: HarnessOptions['outbound']): string[] {
  if (!outbound) return [];
  return [
    '    outbound:',
    ...Object.entries(outbound).map(([key, value]) => `      ${key}: ${value}`),
  ];
}

export function clientToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The emulator, a config naming three of its bots and two clients, and the gateway app. */
export async function startGatewayHarness(options: HarnessOptions = {}): Promise<GatewayHarness> {
  const emulator = await TelegramEmulator.start(options.emulator);
  const main = emulator.addBot({ username: 'main_test_bot' });
  const other = emulator.addBot({ username: 'other_test_bot' });
  const lonely = emulator.addBot({ username: 'lonely_test_bot' });
  const siteToken = clientToken();
  const narrowToken = clientToken();
  const dir = await mkdtemp(join(tmpdir(), 'relaygram-gateway-'));
  const configPath = join(dir, 'relaygram.yaml');
  const apiBase = (await options.apiBase?.(emulator)) ?? emulator.apiRoot;
  const prefix = `gw-${randomBytes(6).toString('hex')}`;
  const yaml = [
    'redis:',
    '  url: redis://127.0.0.1:6379',
    `  prefix: ${prefix}`,
    'telegram:',
    `  api_base: ${apiBase}`,
    'bots:',
    '  - id: main-bot',
    '    token_env: GW_MAIN_TOKEN',
    '    mode: polling',
    ...(options.noDefaultBot ? [] : ['    default: true']),
    ...outboundYaml(options.outbound),
    '  - id: other-bot',
    '    token_env: GW_OTHER_TOKEN',
    '    mode: polling',
    ...outboundYaml(options.otherOutbound ?? options.outbound),
    '  - id: lonely-bot',
    '    token_env: GW_LONELY_TOKEN',
    '    mode: polling',
    ...(options.routes?.length ? ['routes:', ...options.routes] : ['routes: []']),
    'clients:',
    '  - name: site',
    '    token_env: GW_SITE_TOKEN',
    '    bots: [main-bot, other-bot]',
    '  - name: narrow',
    '    token_env: GW_NARROW_TOKEN',
    '    bots: [main-bot]',
    '    methods: [sendMessage, getMe]',
    ...(options.clients ?? []),
    '',
  ].join('\n');
  await writeFile(configPath, yaml);
  const env = testAppEnv(configPath, {
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    HOST: '127.0.0.1',
    LOG_LEVEL: options.logLevel ?? 'warn',
    GW_MAIN_TOKEN: main.token,
    GW_OTHER_TOKEN: other.token,
    GW_LONELY_TOKEN: lonely.token,
    GW_SITE_TOKEN: siteToken,
    GW_NARROW_TOKEN: narrowToken,
    ...options.env,
  });
  const logs: string[] = [];
  const start = () =>
    startApp(
      { service: 'gateway', module: (boot) => GatewayTestModule.forRoot(boot, options) },
      {
        env,
        signals: false,
        // A request left open by a test must not hold its afterAll past Jest's limit.
        httpDrainMs: 3_000,
        logDestination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
            done();
          },
        }),
      },
    );
  const replicas: RunningApp[] = [];
  let running: RunningApp;
  try {
    running = await start();
  } catch (error) {
    await emulator.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    emulator,
    running,
    url: running.url,
    main,
    other,
    lonely,
    siteToken,
    narrowToken,
    logs,
    configPath,
    prefix,
    yaml,
    env,
    dropInToken: (bot, token = siteToken) => `${bot.id}:${token}`,
    async startReplica() {
      const replica = await start();
      replicas.push(replica);
      return replica;
    },
    async close() {
      const from = logs.length;
      await Promise.all(replicas.map((replica) => replica.close()));
      await running.close();
      await emulator.stop();
      // What a shutdown had to cut off says which test left something open.
      const cutOff = logs.slice(from).filter((line) => line.includes('shutdown:'));
      if (cutOff.length > 0) process.stderr.write(`gateway harness: ${cutOff.join('\n')}\n`);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
