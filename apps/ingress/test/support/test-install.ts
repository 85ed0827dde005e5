import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Type } from '@nestjs/common';
import { RedisKeys } from '@relaygram/contracts';
import { IngressModule, type IngressOptionsInput } from '@relaygram/ingress';
import { CoreModule, startApp, type RunningApp } from '@relaygram/platform';
import {
  createRedis,
  decodeEntry,
  queueContext,
  waitForRedis,
  type DeliveryEntry,
  type RelaygramRedis,
} from '@relaygram/queue';
import {
  deleteKeys,
  inProcessStart,
  parsedLogs,
  redisUrl as testRedisUrl,
  type LogLine,
} from '@relaygram/testing';
import { request } from 'undici';
import { stringify } from 'yaml';

export interface BotSpec {
  id: string;
  mode: 'polling' | 'webhook';
  token: string;
  username?: string;
  allowedUpdates?: string[];
  default?: boolean;
  webhook?: {
    url: string;
    secret: string;
    manage?: boolean;
    maxConnections?: number;
    checkEvery?: string;
  };
}

export interface RouteSpec {
  name: string;
  bots?: string[];
  match?: Record<string, unknown>;
  ordering?: 'chat' | 'strict' | 'none';
  format?: 'update' | 'envelope';
}

export interface InstallSpec {
  bots: BotSpec[];
  routes: RouteSpec[];
  apiBase: string;
  /** More keys of the `redis` section (url and prefix are the install's). */
  redis?: Record<string, unknown>;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export const webhookSecret = (): string => randomBytes(24).toString('base64url');

function envName(id: string, what: string): string {
  return `${id.toUpperCase().replace(/-/g, '_')}_${what}`;
}

/** The JSON of an answer's body; undefined when it is not JSON (an error page, nothing). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One ingress process, started in this test process on loopback ports. */
export class IngressInstance {
  constructor(
    readonly running: RunningApp,
    readonly logs: LogLine[],
  ) {}

  get url(): string {
    return this.running.url;
  }

  get<T>(token: abstract new (...args: never[]) => T): T {
    return this.running.app.get(token);
  }

  async post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
    const res = await request(`${this.url}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      headers: res.headers,
      text,
      json: jsonOrUndefined(text),
    } satisfies HttpAnswer;
  }

  async healthz(): Promise<{ status: number; body: HealthzBody }> {
    const res = await request(`${this.url}/healthz`);
    return { status: res.statusCode, body: (await res.body.json()) as HealthzBody };
  }

  close(): Promise<void> {
    return this.running.close();
  }
}

export interface HealthzBot {
  id: string;
  mode: string;
  polling: boolean;
  healthy: boolean;
  problem?: string;
  state?: string;
  webhook?: Record<string, unknown>;
}

export interface HealthzBody {
  status: string;
  service: string;
  polling: boolean;
  bots: HealthzBot[];
}

/**
 * A Relaygram install for one test file: a config file in a temp dir with a key prefix
 * of its own, the env vars holding its secrets, and an inspection client on the same
 * Redis. `cleanup()` stops every instance it started and deletes every key of the prefix.
 */
export class TestInstall {
  readonly prefix = `t-ingress-${randomUUID().slice(0, 8)}`;
  readonly dir = mkdtempSync(join(tmpdir(), 'relaygram-ingress-'));
  readonly configPath = join(this.dir, 'relaygram.yaml');
  readonly env: Record<string, string> = {};
  readonly keys = new RedisKeys(this.prefix);
  readonly redis: RelaygramRedis;
  private readonly instances = new Set<IngressInstance>();
  private readonly exported = new Map<string, string | undefined>();

  constructor(
    spec: InstallSpec,
    readonly redisUrl: string = testRedisUrl(),
  ) {
    this.redis = createRedis(this.redisUrl, { connectionName: 'test-ingress-inspect' });
    this.write(spec);
  }

  /** Writes (or rewrites, for a reload) the config file and the env vars it names. */
  write(spec: InstallSpec): void {
    const bots = spec.bots.map((bot) => {
      this.env[envName(bot.id, 'TOKEN')] = bot.token;
      const out: Record<string, unknown> = {
        id: bot.id,
        token_env: envName(bot.id, 'TOKEN'),
        mode: bot.mode,
      };
      if (bot.username) out.username = bot.username;
      if (bot.allowedUpdates) out.allowed_updates = bot.allowedUpdates;
      if (bot.default !== undefined) out.default = bot.default;
      if (bot.webhook) {
        this.env[envName(bot.id, 'WEBHOOK_SECRET')] = bot.webhook.secret;
        out.webhook = {
          url: bot.webhook.url,
          secret_token_env: envName(bot.id, 'WEBHOOK_SECRET'),
          manage: bot.webhook.manage ?? false,
          ...(bot.webhook.maxConnections ? { max_connections: bot.webhook.maxConnections } : {}),
          ...(bot.webhook.checkEvery ? { check_every: bot.webhook.checkEvery } : {}),
        };
      }
      return out;
    });
    const routes = spec.routes.map((route) => ({
      name: route.name,
      ...(route.bots ? { bots: route.bots } : {}),
      target_url: `http://127.0.0.1:9/${route.name}`,
      ...(route.match ? { match: route.match } : {}),
      ...(route.ordering ? { ordering: route.ordering } : {}),
      ...(route.format ? { format: route.format } : {}),
    }));
    const config = {
      redis: { ...spec.redis, url: this.redisUrl, prefix: this.prefix },
      telegram: { api_base: spec.apiBase },
      bots,
      routes,
      clients: [],
    };
    writeFileSync(this.configPath, stringify(config));
  }

  async start(
    options: {
      ingress?: IngressOptionsInput;
      port?: number;
      redisUrl?: string;
      /** Extra Nest controllers beside ingress (to check what ingress must not change). */
      controllers?: Type[];
    } = {},
  ): Promise<IngressInstance> {
    const { stream, lines: logs } = parsedLogs();
    const running = await startApp(
      {
        service: 'ingress',
        module: (boot) => ({
          module: class IngressTestRoot {},
          imports: [CoreModule.forRoot(boot), IngressModule.forRoot(options.ingress)],
          controllers: options.controllers ?? [],
        }),
      },
      inProcessStart(
        this.configPath,
        {
          ...this.env,
          PORT: String(options.port ?? 0),
          REDIS_URL: options.redisUrl ?? this.redisUrl,
          LOG_LEVEL: 'debug',
        },
        stream,
      ),
    );
    const instance = new IngressInstance(running, logs);
    this.instances.add(instance);
    const close = running.close.bind(running);
    running.close = () => {
      this.instances.delete(instance);
      return close();
    };
    return instance;
  }

  /**
   * Puts the install's env vars into process.env until cleanup: a reload (SIGHUP) reads
   * the secrets from the process environment, as the real process does.
   */
  exportEnv(): void {
    for (const [name, value] of Object.entries(this.env)) {
      if (!this.exported.has(name)) this.exported.set(name, process.env[name]);
      process.env[name] = value;
    }
  }

  /** Every delivery waiting in a lane, decoded. */
  async laneEntries(lane: string): Promise<DeliveryEntry[]> {
    const raw = await this.redis.lrangeBuffer(this.keys.lane(lane), 0, -1);
    return raw.map((entry) => decodeEntry(entry));
  }

  /** Lane ids of a route that hold deliveries. */
  async lanesOf(route: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.routeLanes(route))).sort();
  }

  /** Every delivery of a route, across its lanes. */
  async deliveriesOf(route: string): Promise<DeliveryEntry[]> {
    const entries: DeliveryEntry[] = [];
    for (const lane of await this.lanesOf(route)) entries.push(...(await this.laneEntries(lane)));
    return entries;
  }

  context() {
    return queueContext(this.redis, this.prefix);
  }

  async ready(): Promise<void> {
    if (!(await waitForRedis(this.redis))) throw new Error(`no Redis answers at ${this.redisUrl}`);
  }

  async cleanup(): Promise<void> {
    for (const instance of [...this.instances]) await instance.close();
    await deleteKeys(this.redis, `${this.prefix}:*`);
    await this.redis.quit();
    for (const [name, value] of this.exported) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
