import {
  ConfigurableModuleBuilder,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DeadLetterStore } from './dead-letters/dead-letter-store';
import { DrainScheduler } from './lanes/drain-scheduler';
import { LaneReconciler } from './lanes/lane-reconciler';
import { LaneStore } from './lanes/lane-store';
import { UpdateEnqueuer } from './lanes/update-enqueuer';
import { queueContext, type QueueContext } from './queue-context';
import { createRedis, type RelaygramRedis } from './redis/redis-client';

export interface QueueModuleOptions {
  redisUrl: string;
  prefix: string;
  /** Shown in CLIENT LIST, e.g. `relaygram-ingress`. */
  connectionName?: string;
}

export const REDIS = Symbol('RELAYGRAM_REDIS');
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
      provide: REDIS,
      inject: [MODULE_OPTIONS_TOKEN],
      useFactory: (options: QueueModuleOptions) =>
        createRedis(options.redisUrl, { connectionName: options.connectionName, mode: 'request' }),
    },
    {
      provide: QUEUE_CONTEXT,
      inject: [REDIS, MODULE_OPTIONS_TOKEN],
      useFactory: (redis: RelaygramRedis, options: QueueModuleOptions) =>
        queueContext(redis, options.prefix),
    },
    {
      provide: DrainScheduler,
      inject: [QUEUE_CONTEXT],
      useFactory: (ctx: QueueContext) => new DrainScheduler(ctx),
    },
    {
      provide: UpdateEnqueuer,
      inject: [QUEUE_CONTEXT, DrainScheduler],
      useFactory: (ctx: QueueContext, scheduler: DrainScheduler) =>
        new UpdateEnqueuer(ctx, scheduler),
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
    DrainScheduler,
    UpdateEnqueuer,
    LaneStore,
    DeadLetterStore,
    LaneReconciler,
  ],
})
export class QueueModule extends ConfigurableModuleClass {}
