import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RelaygramConfig, RuntimeEnv, ServiceName } from '@relaygram/config';
import type { RouteOptions } from 'fastify';
import type { Logger } from 'pino';

export interface BootContext {
  config: RelaygramConfig;
  env: RuntimeEnv;
  service: ServiceName;
  logger: Logger;
}

export interface AppDefinition {
  service: ServiceName;
  /** The root module, built once the config is loaded and valid. */
  module: (boot: BootContext) => DynamicModule;
  /**
   * Each request handled inside its own AsyncLocalStorage context, so every line logged
   * on its behalf carries its `req_id` (the default). On Node 20 such a context puts a
   * hook on every promise of the process, a measurable share of a proxied call: an app
   * whose request lines name their `req_id` themselves (the gateway) turns it off.
   */
  requestContext?: boolean;
}

export interface RunOptions {
  /** Environment to read (tests pass their own); process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Install SIGTERM/SIGINT/SIGHUP handlers (the real processes do, tests don't). */
  signals?: boolean;
  /** Where log lines go (tests capture them); stdout by default. */
  logDestination?: NodeJS.WritableStream;
  /** Extra lines for the start-up banner. */
  banner?: (app: RunningApp) => string[];
  /**
   * Small installs: with no REDIS_URL, `redis.url` on this machine (127.0.0.1:6379 as
   * shipped) and nothing answering there, start a redis-server from PATH (AOF in
   * `dataDir`) and stop it after the app has closed. None on PATH: start-up fails saying
   * how to get one.
   */
  localRedis?: { dataDir: string };
  /** Overrides REQUEST_TIMEOUT_MS (tests of slow clients). */
  requestTimeoutMs?: number;
  /** Overrides HTTP_DRAIN_MS (tests that close often). */
  httpDrainMs?: number;
  /** Sees every route as it is registered (the route-coverage tests); never per request. */
  onRoute?: (route: RouteOptions) => void;
}

export interface RunningApp {
  app: NestFastifyApplication;
  url: string;
  adminUrl: string;
  logger: Logger;
  close(): Promise<void>;
}

/** Start-up refused for reasons the operator can fix; one line each, no stack. */
export class StartupError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
    this.name = 'StartupError';
  }
}
