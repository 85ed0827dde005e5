import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { parse, stringify } from 'yaml';
import { freePort } from '@relaygram/queue';
import { rssBytes } from './proc-stats';
import { stopProcess, trackChild, workspaceRoot } from '@relaygram/testing';

export type AppName = 'ingress' | 'dispatcher' | 'gateway';

export interface BotSpec {
  id: string;
  token: string;
  username: string;
  /** Secret token of the webhook (X-Telegram-Bot-Api-Secret-Token). */
  webhookSecret: string;
}

export interface RouteSpec {
  name: string;
  targetUrl: string;
  ordering: 'chat' | 'strict' | 'none';
  concurrency?: number;
}

/** A pull route: its client's drop-in getUpdates takes its updates. */
export interface PullRouteSpec {
  name: string;
  pullClient: string;
}

export interface ClientSpec {
  name: string;
  token: string;
}

export interface LaunchOptions {
  /** Run apps from source through @swc-node/register instead of apps/<app>/dist. */
  fromSource: boolean;
  logLevel: string;
  /** Write a --cpu-prof profile of each app into this directory. */
  cpuProfDir?: string;
  /** Node flags of the apps only (V8 heap sizes, for the memory measurements). */
  nodeOptions?: string[];
}

/**
 * `node --cpu-prof` flags for an app or a baseline when the run profiles (`--cpu-prof`):
 * a baseline's profile next to its app's shows where the app spends what the baseline
 * does not.
 */
export function profileArgs(options: LaunchOptions, label: string): string[] {
  if (!options.cpuProfDir) return [];
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${options.cpuProfDir}`,
    `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`,
  ];
}

export const secret = (): string => randomBytes(24).toString('base64url');

function envName(id: string, what: string): string {
  return `BENCH_${id.toUpperCase().replace(/-/g, '_')}_${what}`;
}

/**
 * One Relaygram configuration under a key prefix of its own: the YAML file in a temp
 * directory and the secret env vars it names. Apps started from it are child
 * processes, configured the way an operator would: RELAYGRAM_CONFIG, REDIS_URL, PORT,
 * ADMIN_PORT, TELEGRAM_API_BASE, LOG_LEVEL and the secrets.
 */
export class RelaygramInstall {
  readonly dir = mkdtempSync(join(tmpdir(), 'relaygram-bench-'));
  readonly configPath = join(this.dir, 'relaygram.yaml');
  readonly env: Record<string, string> = {};
  private readonly apps = new Set<AppProcess>();

  constructor(
    readonly prefix: string,
    readonly redisUrl: string,
    readonly apiBase: string,
    readonly bot: BotSpec,
    routes: readonly (RouteSpec | PullRouteSpec)[],
    clients: readonly ClientSpec[] = [],
  ) {
    this.env[envName(bot.id, 'TOKEN')] = bot.token;
    this.env[envName(bot.id, 'WEBHOOK_SECRET')] = bot.webhookSecret;
    const config = {
      redis: { url: redisUrl, prefix },
      telegram: { api_base: apiBase },
      bots: [
        {
          id: bot.id,
          token_env: envName(bot.id, 'TOKEN'),
          username: bot.username,
          mode: 'webhook',
          default: true,
          webhook: {
            url: `https://relay.example.com/webhooks/telegram/${bot.id}`,
            secret_token_env: envName(bot.id, 'WEBHOOK_SECRET'),
            // The bench posts the webhooks itself; no setWebhook at start.
            manage: false,
          },
        },
      ],
      routes: routes.map((route) => {
        if ('pullClient' in route)
          return { name: route.name, bots: [bot.id], pull: { client: route.pullClient } };
        // Deliveries are signed, as in any real install (an unsigned route is a warning).
        const signing = envName(route.name, 'SIGNING_SECRET');
        this.env[signing] = secret();
        return {
          name: route.name,
          bots: [bot.id],
          target_url: route.targetUrl,
          signing_secret_env: signing,
          ordering: route.ordering,
          ...(route.concurrency ? { concurrency: route.concurrency } : {}),
        };
      }),
      clients: clients.map((client) => {
        const tokenEnv = envName(client.name, 'CLIENT_TOKEN');
        this.env[tokenEnv] = client.token;
        return { name: client.name, token_env: tokenEnv, bots: [bot.id] };
      }),
    };
    writeFileSync(this.configPath, stringify(config));
  }

  /**
   * Adds top-level keys to the config (`delivery_log`, ...), for apps started after;
   * the config stays as shipped where a section adds nothing.
   */
  configure(keys: Record<string, unknown>): void {
    const config = parse(readFileSync(this.configPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(this.configPath, stringify({ ...config, ...keys }));
  }

  /** `label` names the app's CPU profile (default: the app's name). */
  async start(app: AppName, options: LaunchOptions, label: string = app): Promise<AppProcess> {
    const started = await AppProcess.start(app, this, options, label);
    this.apps.add(started);
    return started;
  }

  async stop(app: AppProcess): Promise<void> {
    this.apps.delete(app);
    await app.stop();
  }

  /** Stops the apps still running and removes the temp directory. */
  async close(): Promise<void> {
    await Promise.all([...this.apps].map((app) => app.stop()));
    this.apps.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class AppProcess {
  /** RSS right after start-up, before any load: the app's own footprint. */
  idleRssBytes?: number;

  private constructor(
    readonly app: AppName,
    readonly child: ChildProcess,
    readonly url: string,
    readonly adminUrl: string,
    readonly logPath: string,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  static async start(
    app: AppName,
    install: RelaygramInstall,
    options: LaunchOptions,
    label: string,
  ): Promise<AppProcess> {
    const root = workspaceRoot();
    const [port, adminPort] = [await freePort(), await freePort()];
    const nodeArgs: string[] = [...(options.nodeOptions ?? [])];
    let entry = join(root, 'apps', app, 'dist', 'main.js');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...install.env,
      NODE_ENV: 'production',
      RELAYGRAM_CONFIG: install.configPath,
      REDIS_URL: install.redisUrl,
      TELEGRAM_API_BASE: install.apiBase,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      LOG_LEVEL: options.logLevel,
    };
    if (options.fromSource) {
      entry = join(root, 'apps', app, 'src', 'main.ts');
      nodeArgs.push('-r', '@swc-node/register');
      env.SWC_NODE_PROJECT = join(root, 'tsconfig.base.json');
    } else if (!existsSync(entry)) {
      throw new Error(`${entry} is missing: run \`npm run build\` first (or pass --from-source)`);
    }
    nodeArgs.push(...profileArgs(options, label));
    const logPath = join(install.dir, `${app}-${port}.log`);
    const log = openSync(logPath, 'a');
    const child = spawn(process.execPath, [...nodeArgs, entry], {
      cwd: root,
      env,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    trackChild(child, app);
    const running = new AppProcess(
      app,
      child,
      `http://127.0.0.1:${port}`,
      `http://127.0.0.1:${adminPort}`,
      logPath,
    );
    try {
      await running.waitLive(options.fromSource ? 120_000 : 60_000);
      running.idleRssBytes = rssBytes(running.pid);
    } catch (error) {
      await stopProcess(child, 2_000);
      throw error;
    }
    return running;
  }

  /** The last lines the app wrote (stdout and stderr), for error messages. */
  logTail(lines = 15): string {
    try {
      return readFileSync(this.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  private async waitLive(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`${this.app} exited during start-up:\n${this.logTail()}`);
      }
      try {
        const res = await request(`${this.url}/health/live`, {
          headersTimeout: 1_000,
          bodyTimeout: 1_000,
        });
        await res.body.dump();
        if (res.statusCode === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(
          `${this.app} did not answer /health/live in ${timeoutMs} ms:\n${this.logTail()}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  stop(): Promise<void> {
    return stopProcess(this.child, 10_000);
  }
}

/**
 * Source files newer than the dist an app runs from: the numbers would be of older
 * code. Returns the stale projects (apps and the libs they load).
 */
export function staleBuilds(): string[] {
  const root = workspaceRoot();
  const stale: string[] = [];
  for (const group of ['apps', 'libs']) {
    for (const name of readdirSync(join(root, group))) {
      const src = join(root, group, name, 'src');
      const dist = join(root, group, name, 'dist');
      if (!existsSync(src)) continue;
      if (!existsSync(dist) || newest(src) > newest(dist)) stale.push(`${group}/${name}`);
    }
  }
  return stale;
}

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path));
    else if (!entry.name.endsWith('.spec.ts')) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}
