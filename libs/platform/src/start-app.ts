import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigService, secretValuesOf, type ServiceName } from '@relaygram/config';
import { errorMessage } from '@relaygram/contracts';
import { createLogger, maskSecrets, PinoNestLogger } from '@relaygram/observability';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  StartupError,
  type AppDefinition,
  type RunningApp,
  type RunOptions,
} from './app-definition';
import { installApiDocuments } from './api-documents';
import { boundHeapGrowth } from './heap-growth';
import { createHttpAdapter, HTTP_DRAIN_MS, installRequestHooks } from './http-server';
import type { ListenerPair } from './management-listener';
import { RouteNotFoundFilter } from './route-not-found.filter';
import { readSettings, type BootSettings } from './settings';
import { installSignalHandlers } from './signals';

/**
 * Starts one Relaygram process: env and config are read and validated first (a bad
 * one stops start-up with one line per problem), then the Nest app serves the public
 * port and the management listener.
 */
export async function startApp(
  definition: AppDefinition,
  options: RunOptions = {},
): Promise<RunningApp> {
  const settings = await readSettings(definition.service, options);
  const logger = startLogging(definition.service, settings, options);
  const { adapter, listeners } = createHttpAdapter(
    options.requestTimeoutMs,
    definition.requestContext ?? true,
  );
  const fastify = adapter.getInstance();
  if (options.onRoute) fastify.addHook('onRoute', options.onRoute);
  await installApiDocuments(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(
    definition.module({
      config: settings.config,
      env: settings.env,
      service: definition.service,
      logger,
    }),
    adapter,
    { logger: new PinoNestLogger(logger), bufferLogs: true },
  );
  app.useGlobalFilters(new RouteNotFoundFilter());
  app.get(ConfigService).onReload((next) => maskSecrets(secretValuesOf(next, settings.env)));
  installRequestHooks(app, logger);

  const running = await listen(app, listeners, settings, logger, options.httpDrainMs);
  if (options.signals !== false) installSignalHandlers(running);
  const lines = [
    `${definition.service} listening on ${running.url} (public) and ${running.adminUrl} (management: /metrics, /admin)`,
    ...(options.banner?.(running) ?? []),
  ];
  for (const line of lines) logger.info(line);
  return running;
}

/** The process logger, masking every configured secret from its first line on. */
function startLogging(service: ServiceName, settings: BootSettings, options: RunOptions): Logger {
  const { config, env, localRedis } = settings;
  maskSecrets(secretValuesOf(config, env));
  const logger = createLogger({
    level: env.logLevel,
    service,
    destination: options.logDestination,
  });
  for (const warning of config.warnings)
    logger.warn({ config: config.source }, `config: ${warning}`);
  if (localRedis) {
    logger.info(
      `no Redis answers at redis.url: started redis-server (pid ${localRedis.pid}) on ${localRedis.url}, data in ${options.localRedis?.dataDir}`,
    );
  }
  return logger;
}

/** Opens the public port, then the management one; a management port in use closes the app. */
async function listen(
  app: NestFastifyApplication,
  listeners: ListenerPair,
  settings: BootSettings,
  logger: Logger,
  httpDrainMs = HTTP_DRAIN_MS,
): Promise<RunningApp> {
  const { env, localRedis } = settings;
  await app.listen(env.port, env.host);
  const management = listeners.management!;
  let adminAddress: AddressInfo;
  try {
    adminAddress = await listenOn(management, env.adminPort, env.adminHost);
  } catch (error) {
    await app.close();
    throw new StartupError([
      `ADMIN_PORT: cannot listen on ${env.adminHost}:${env.adminPort}: ${errorMessage(error)}`,
    ]);
  }
  const publicAddress = app.getHttpServer().address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${hostForUrl(env.host)}:${publicAddress.port}`,
    adminUrl: `http://${hostForUrl(env.adminHost)}:${adminAddress.port}`,
    logger,
    close() {
      closing ??= (async () => {
        const managementClosed = new Promise<void>((resolve) => management.close(() => resolve()));
        management.closeIdleConnections();
        const cutOff = setTimeout(
          () => cutOffRequests(app.getHttpServer() as Server, management, httpDrainMs, logger),
          httpDrainMs,
        );
        cutOff.unref();
        await app.close();
        clearTimeout(cutOff);
        management.closeAllConnections();
        await managementClosed;
        await localRedis?.stop();
        // Log lines are written in batches: the last ones go out before the exit.
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
      })();
      return closing;
    },
  };
}

/**
 * A request still open when the drain time is up (a client that stopped sending, an
 * answer nobody reads) would hold the shutdown until SHUTDOWN_GRACE_MS ends the process
 * with the Redis connections and the last log lines still open: its connection is cut.
 */
function cutOffRequests(publicServer: Server, management: Server, drainMs: number, logger: Logger) {
  publicServer.getConnections((_error, open) => {
    logger.warn(`shutdown: ${open} connection(s) still open after ${drainMs} ms, cut off`);
    publicServer.closeAllConnections();
    management.closeAllConnections();
  });
}

function listenOn(
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

/** Entry point of an app's main.ts: start, or print what is wrong and exit 1. */
export function runApp(definition: AppDefinition, options: RunOptions = {}): void {
  boundHeapGrowth();
  startApp(definition, options).catch((error: unknown) => {
    if (error instanceof StartupError) {
      process.stderr.write(
        `relaygram ${definition.service}: cannot start:\n${error.lines.map((l) => `  ${l}`).join('\n')}\n`,
      );
    } else {
      const detail = error instanceof Error && error.stack ? error.stack : errorMessage(error);
      process.stderr.write(`relaygram ${definition.service}: cannot start: ${detail}\n`);
    }
    process.exit(1);
  });
}
