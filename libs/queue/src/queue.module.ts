import {
  ConfigurableModuleBuilder,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService, deliveryLogOf } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/contracts';
import pino, { type Logger } from 'pino';
import { DeadLetterStore } from './dead-letters/dead-letter-store';
import { DeliveryLogReader } from './delivery-log/delivery-log-reader';
import { DeliveryLogSettings } from './delivery-log/delivery-log-settings';
import { DrainScheduler } from './lanes/drain-scheduler';
import { LaneReconciler } from './lanes/lane-reconciler';
import { LaneStore } from './lanes/lane-store';
import { PullStore } from './pull/pull-store';
import { OutboxStore } from './outbox/outbox-store';
import { BroadcastStore } from './broadcast/broadcast-store';
import { UpdateEnqueuer } from './lanes/update-enqueuer';
import { queueContext, type QueueContext } from './queue-context';
import { createRedis, waitForRedis, type RelaygramRedis } from './redis/redis-client';

export interface QueueModuleOptions {
  redisUrl: string;
  prefix: string;
  /** Shown in CLIENT LIST, e.g. `relaygram-ingress`. */
  connectionName?: string;
  /** How long start-up waits for Redis before going on without it (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * How long a command of the shared connection, which serves requests (webhooks, the
   * gateway, admin calls), may wait for Redis (default 1 s).
   */
  commandTimeoutMs?: number;
  /** Chaos suite only (RELAYGRAM_FAULTS die_after_enqueue): see UpdateEnqueuer. */
  dieAfterEnqueue?: number;
}

/**
 * A webhook must be answered well before Telegram gives up on it: a Redis that holds a
 * command longer than this is treated as away (503), and Telegram sends the update again.
 */
export const REQUEST_COMMAND_TIMEOUT_MS = 1000;

/** One warning per outage, not one per reconnect attempt. */
function connectionErrorLogger(logger: Logger): (error: Error) => void {
  let reported = false;
  return (error) => {
    if (reported) return;
    reported = true;
    logger.warn({ err: error }, 'Redis connection lost; reconnecting');
    setTimeout(() => (reported = false), 30_000).unref();
  };
}

/**
 * The command connection. Start-up waits for it (bounded), so the first requests after a
 * start do not fail merely because the connection was still being made; when Redis is
 * really away the app starts anyway and reports it in /health/ready and /healthz.
 */
async function connectCommandClient(
  options: QueueModuleOptions,
  logger: Logger,
): Promise<RelaygramRedis> {
  const client = createRedis(options.redisUrl, {
    connectionName: options.connectionName,
    mode: 'request',
    commandTimeoutMs: options.commandTimeoutMs ?? REQUEST_COMMAND_TIMEOUT_MS,
    onError: connectionErrorLogger(logger),
  });
  if (!(await waitForRedis(client, options.connectTimeoutMs ?? 10_000))) {
    logger.warn(
      'Redis does not answer yet; starting without it (requests that need it answer 503)',
    );
  }
  return client;
}

export const REDIS = Symbol('RELAYGRAM_REDIS');
/** The process's logger (the observability module provides it), or a silent one in tests. */
const QUEUE_LOGGER = Symbol('RELAYGRAM_QUEUE_LOGGER');
export const QUEUE_CONTEXT = Symbol('RELAYGRAM_QUEUE_CONTEXT');

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } =
  new ConfigurableModuleBuilder<QueueModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
    }))
    .build();

export { MODULE_OPTIONS_TOKEN as QUEUE_MODULE_OPTIONS };

/** Closes the shared connection last, after every feature stopped using it. */
@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RelaygramRedis,
    private readonly scheduler: DrainScheduler,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.scheduler.close().catch(() => undefined);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * The durable store on Redis for every app: one command connection (fail-fast, so
 * ingress can answer 503 while Redis is away) and the lane, dead-letter and scheduling
 * services on top of it.
 */
@Module({
  providers: [
    {
      provide: QUEUE_LOGGER,
      inject: [{ token: RELAYGRAM_LOGGER, optional: true }],
      useFactory: (logger?: Logger) =>
        logger ? logger.child({ component: 'redis' }) : pino({ level: 'silent' }),
    },
    {
      provide: REDIS,
      inject: [MODULE_OPTIONS_TOKEN, QUEUE_LOGGER],
      useFactory: connectCommandClient,
    },
    {
      provide: DeliveryLogSettings,
      inject: [{ token: ConfigService, optional: true }],
      useFactory: (config?: ConfigService) => {
        if (!config) return new DeliveryLogSettings();
        const settings = new DeliveryLogSettings(deliveryLogOf(config.config));
        config.onReload((next) => settings.set(deliveryLogOf(next)));
        return settings;
      },
    },
    {
      provide: QUEUE_CONTEXT,
      inject: [REDIS, MODULE_OPTIONS_TOKEN, DeliveryLogSettings],
      useFactory: (redis: RelaygramRedis, options: QueueModuleOptions, log: DeliveryLogSettings) =>
        queueContext(redis, options.prefix, log),
    },
    {
      provide: DrainScheduler,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new DrainScheduler(ctx),
    },
    {
      provide: UpdateEnqueuer,
      inject: [QUEUE_CONTEXT, DrainScheduler, MODULE_OPTIONS_TOKEN, QUEUE_LOGGER],
      useFactory: (
        ctx: QueueContext,
        scheduler: DrainScheduler,
        options: QueueModuleOptions,
        logger: Logger,
      ) =>
        new UpdateEnqueuer(
          ctx,
          scheduler,
          (error) =>
            // The update is accepted; the reconciler arms its lanes' jobs later.
            logger.warn({ err: error }, 'drain job not added (the reconciler will add it)'),
          options.dieAfterEnqueue,
        ),
    },
    {
      provide: LaneStore,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new LaneStore(ctx),
    },
    {
      provide: DeadLetterStore,
      inject: [QUEUE_CONTEXT, DrainScheduler],
      useFactory: (ctx: QueueContext, scheduler: DrainScheduler) =>
        new DeadLetterStore(ctx, scheduler),
    },
    {
      provide: DeliveryLogReader,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new DeliveryLogReader(ctx),
    },
    {
      provide: PullStore,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new PullStore(ctx),
    },
    {
      provide: OutboxStore,
      inject: [QUEUE_CONTEXT, DrainScheduler, QUEUE_LOGGER],
      useFactory: (ctx: QueueContext, scheduler: DrainScheduler, logger: Logger) =>
        new OutboxStore(ctx, scheduler, (error) =>
          // The send is durable; the reconciler arms its lane's job later.
          logger.warn({ err: error }, 'drain job not added (the reconciler will add it)'),
        ),
    },
    {
      provide: BroadcastStore,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new BroadcastStore(ctx),
    },
    {
      provide: LaneReconciler,
      inject: [QUEUE_CONTEXT, LaneStore, DrainScheduler],
      useFactory: (ctx: QueueContext, lanes: LaneStore, scheduler: DrainScheduler) =>
        new LaneReconciler(ctx, lanes, scheduler),
    },
    RedisLifecycle,
  ],
  exports: [
    REDIS,
    QUEUE_CONTEXT,
    DeliveryLogSettings,
    DrainScheduler,
    UpdateEnqueuer,
    LaneStore,
    OutboxStore,
    BroadcastStore,
    DeadLetterStore,
    LaneReconciler,
    PullStore,
    DeliveryLogReader,
  ],
})
export class QueueModule extends ConfigurableModuleClass {}
