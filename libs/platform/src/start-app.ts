import 'reflect-metadata';
import { Logger, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ConfigError,
  ConfigService,
  RuntimeEnvError,
  loadConfigOrThrow,
  readRuntimeEnv,
  secretValuesOf,
  type RelaygramConfig,
  type RuntimeEnv,
  type ServiceName,
} from '@relaygram/config';
import { RedisServerNotFoundError, redisChildIfNeeded, type LocalRedis } from '@relaygram/queue';
import type { AddressInfo } from 'node:net';
import type { Logger as PinoLogger } from 'pino';
import { createLogger, maskSecrets, PinoNestLogger } from '../logging/logger';
import { installAccessLog } from './access-log';
import { RouteNotFoundFilter } from './route-not-found.filter';
import {
  isManagementOnlyPath,
  isManagementRequest,
  ListenerPair,
  requestIdOf,
} from './management-listener';

export interface BootContext {
  config: RelaygramConfig;
  env: RuntimeEnv;
  service: ServiceName;
  logger: PinoLogger;
}

export interface AppDefinition {
  service: ServiceName;
  /** The root module, built once the config is loaded and valid. */
  module: (boot: BootContext) => DynamicModule;
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
}

export interface RunningApp {
  app: NestFastifyApplication;
  url: string;
  adminUrl: string;
  logger: PinoLogger;
  close(): Promise<void>;
}

/** Bodies above this are refused with 413 (a webhook update is far smaller). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** A whole request must arrive within this (see ListenerPair). */
export const REQUEST_TIMEOUT_MS = 120_000;
const HEADERS_TIMEOUT_MS = 30_000;
// Above the 60 s idle timeout of common load balancers, so they close first.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Time given to in-flight work on SIGTERM before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 25_000;

export class StartupError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
    this.name = 'StartupError';
  }
}

function listen(
  server: NonNullable<ListenerPair['management']>,
  port: number,
  host: string,
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function hostForUrl(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

/**
 * Starts one Relaygram process: env and config are read and validated first (a bad
 * one stops start-up with one line per problem), then the Nest app serves the public
 * port and the management listener.
 */
export async function startApp(
  definition: AppDefinition,
  options: RunOptions = {},
): Promise<RunningApp> {
  let env: RuntimeEnv;
  let config: RelaygramConfig;
  let localRedis: LocalRedis | undefined;
  try {
    env = readRuntimeEnv(definition.service, options.env);
    config = loadConfigOrThrow({ path: env.configPath, env: options.env });
    if (options.localRedis) {
      localRedis = await redisChildIfNeeded(
        { envUrl: env.redisUrl, url: config.redis.url },
        { dataDir: options.localRedis.dataDir, stopOnExit: true },
      );
      if (localRedis) {
        // The child is this process's REDIS_URL from now on, so a SIGHUP reload (which
        // reads the environment again) finds the same Redis.
        // eslint-disable-next-line no-restricted-syntax -- see above
        (options.env ?? process.env).REDIS_URL = localRedis.url;
        env = readRuntimeEnv(definition.service, options.env);
        config = loadConfigOrThrow({ path: env.configPath, env: options.env });
      }
    }
  } catch (error) {
    await localRedis?.stop();
    if (error instanceof ConfigError || error instanceof RuntimeEnvError)
      throw new StartupError([...error.problems]);
    if (error instanceof RedisServerNotFoundError) throw new StartupError([error.message]);
    throw error;
  }

  // Every configured secret is masked in every line from the first one on.
  maskSecrets(secretValuesOf(config, env));
  const logger = createLogger({
    level: env.logLevel,
    service: definition.service,
    destination: options.logDestination,
  });
  for (const warning of config.warnings)
    logger.warn({ config: config.source }, `config: ${warning}`);
  if (localRedis) {
    logger.info(
      `no Redis answers at redis.url: started redis-server (pid ${localRedis.pid}) on ${localRedis.url}, data in ${options.localRedis?.dataDir}`,
    );
  }

  // A client that stalls (slow headers, a trickling body) is cut off rather than holding
  // a socket; the limit leaves a 50 MB upload room at about 0.5 MB/s.
  const listeners = new ListenerPair({
    requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  });
  const adapter = new FastifyAdapter({
    serverFactory: listeners.serverFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify's access log would print raw URLs (drop-in paths carry client tokens).
    logger: false,
    genReqId: requestIdOf,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // No Nest middleware is used anywhere: middie's hook would run for every request
    // and do nothing.
    skipMiddie: true,
  });
  const nestLogger = new PinoNestLogger(logger);
  const app = await NestFactory.create<NestFastifyApplication>(
    definition.module({ config, env, service: definition.service, logger }),
    adapter,
    { logger: nestLogger, bufferLogs: true },
  );
  app.useGlobalFilters(new RouteNotFoundFilter());
  app.get(ConfigService).onReload((next) => maskSecrets(secretValuesOf(next, env)));

  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    if (!isManagementRequest(request.raw) && isManagementOnlyPath(request.url)) {
      await reply.code(404).send({ error: 'not found' });
    } else if (request.is404) {
      // An unknown path is answered 404 whatever it carries: its body is never parsed,
      // so a malformed one cannot turn the answer into a 400 (Node discards it).
      delete request.headers['content-type'];
      delete request.headers['content-length'];
      delete request.headers['transfer-encoding'];
    }
  });
  installAccessLog(fastify, logger);

  await app.listen(env.port, env.host);
  const management = listeners.management!;
  let adminAddress: AddressInfo;
  try {
    adminAddress = await listen(management, env.adminPort, env.adminHost);
  } catch (error) {
    await app.close();
    throw new StartupError([
      `ADMIN_PORT: cannot listen on ${env.adminHost}:${env.adminPort}: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  const publicAddress = app.getHttpServer().address() as AddressInfo;

  let closing: Promise<void> | undefined;
  const running: RunningApp = {
    app,
    url: `http://${hostForUrl(env.host)}:${publicAddress.port}`,
    adminUrl: `http://${hostForUrl(env.adminHost)}:${adminAddress.port}`,
    logger,
    close() {
      closing ??= (async () => {
        const managementClosed = new Promise<void>((resolve) => management.close(() => resolve()));
        management.closeIdleConnections();
        await app.close();
        management.closeAllConnections();
        await managementClosed;
        await localRedis?.stop();
        // Log lines are written in batches: the last ones go out before the exit.
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
      })();
      return closing;
    },
  };

  if (options.signals !== false) installSignalHandlers(running, app);
  const lines = [
    `${definition.service} listening on ${running.url} (public) and ${running.adminUrl} (management: /metrics, /admin)`,
    ...(options.banner?.(running) ?? []),
  ];
  for (const line of lines) logger.info(line);
  return running;
}

function installSignalHandlers(running: RunningApp, app: INestApplication): void {
  const log = new Logger('Process');
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.log(`${signal}: finishing in-flight work, then exiting`);
    const timer = setTimeout(() => {
      log.error(`shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    timer.unref();
    running
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.on('SIGHUP', () => {
    void app
      .get(ConfigService)
      .reload()
      .catch((error: unknown) =>
        log.error(
          `config reload failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  });
}

/** Entry point of an app's main.ts: start, or print what is wrong and exit 1. */
export function runApp(definition: AppDefinition, options: RunOptions = {}): void {
  startApp(definition, options).catch((error: unknown) => {
    if (error instanceof StartupError) {
      process.stderr.write(
        `relaygram ${definition.service}: cannot start:\n${error.lines.map((l) => `  ${l}`).join('\n')}\n`,
      );
    } else {
      process.stderr.write(
        `relaygram ${definition.service}: cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
    process.exit(1);
  });
}
