import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { QueueName } from '@relaygram/contracts';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER, RelaygramMetrics } from '@relaygram/observability';
import { OutboundPacer, PacingModule } from '@relaygram/pacing';
import {
  DeadLetterStore,
  DrainScheduler,
  LaneReconciler,
  LaneStore,
  QUEUE_CONTEXT,
  type QueueContext,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { TargetClient } from './delivery/target-client';
import { WebhookReplyExecutor } from './delivery/webhook-reply.executor';
import { DispatcherLifecycle } from './dispatcher-lifecycle';
import {
  DISPATCHER_OPTIONS,
  resolveDispatcherOptions,
  type DispatcherModuleOptions,
  type ResolvedDispatcherOptions,
} from './dispatcher-options';
import { DispatcherInbox } from './lanes/dispatcher-inbox';
import { DrainLocks } from './lanes/drain-locks';
import { LaneDrainer } from './lanes/lane-drainer';
import {
  MAINTENANCE_CONNECTION,
  MaintenanceConnectionModule,
} from './maintenance/maintenance-connection';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { MaintenanceScheduler, type MaintenanceJob } from './maintenance/maintenance-scheduler';
import type { RelaygramRedis } from '@relaygram/queue';
import { RouteRuntimes } from './routes/route-runtimes';
import { DeliveryWorkers } from './workers/delivery-workers';

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } =
  new ConfigurableModuleBuilder<DispatcherModuleOptions>().setClassMethodName('forRoot').build();

function childLogger(logger: Logger): Logger {
  return logger.child({ component: 'dispatcher' });
}

/**
 * The dispatcher feature: everything `apps/dispatcher` and `apps/standalone` run for it.
 * Import it as it is (production defaults) or with `DispatcherModule.forRoot({...})`
 * to tune it (tests shorten the reconcile period and grace times). It relies on the
 * global config, queue and observability modules of CoreModule.
 */
@Module({
  imports: [
    BullModule.forRootAsync({
      imports: [MaintenanceConnectionModule],
      inject: [MAINTENANCE_CONNECTION, QUEUE_CONTEXT],
      useFactory: (connection: RelaygramRedis, ctx: QueueContext) => ({
        connection,
        prefix: ctx.keys.bullPrefix,
      }),
    }),
    BullModule.registerQueue({ name: QueueName.Maintenance }),
    PacingModule,
  ],
  providers: [
    {
      provide: DISPATCHER_OPTIONS,
      inject: [ConfigService, { token: MODULE_OPTIONS_TOKEN, optional: true }],
      useFactory: (config: ConfigService, options?: DispatcherModuleOptions) =>
        resolveDispatcherOptions(options, config.env.faults),
    },
    {
      provide: RouteRuntimes,
      inject: [RelaygramMetrics],
      useFactory: (metrics: RelaygramMetrics) => new RouteRuntimes(metrics),
    },
    { provide: TargetClient, useFactory: () => new TargetClient() },
    {
      provide: WebhookReplyExecutor,
      inject: [ConfigService, RelaygramMetrics, RELAYGRAM_LOGGER, OutboundPacer],
      // The process's one pacer: replies share its budgets (and its fallback during a
      // Redis outage) with the gateway in a standalone process.
      useFactory: (
        config: ConfigService,
        metrics: RelaygramMetrics,
        logger: Logger,
        pacer: OutboundPacer,
      ) => new WebhookReplyExecutor(config.config, metrics, childLogger(logger), pacer),
    },
    {
      provide: DrainLocks,
      inject: [DISPATCHER_OPTIONS],
      useFactory: (options: ResolvedDispatcherOptions) => new DrainLocks(options.lockDurationMs),
    },
    {
      provide: DispatcherInbox,
      inject: [QUEUE_CONTEXT, LaneStore, RouteRuntimes, ConfigService, RELAYGRAM_LOGGER],
      useFactory: (
        ctx: QueueContext,
        lanes: LaneStore,
        routes: RouteRuntimes,
        config: ConfigService,
        logger: Logger,
      ) =>
        new DispatcherInbox(ctx, lanes, () => routes.slots(), childLogger(logger), {
          redisUrl: config.config.redis.url,
        }),
    },
    {
      provide: LaneDrainer,
      inject: [
        RouteRuntimes,
        TargetClient,
        WebhookReplyExecutor,
        DrainScheduler,
        DispatcherInbox,
        DrainLocks,
        RELAYGRAM_LOGGER,
        DISPATCHER_OPTIONS,
      ],
      useFactory: (
        routes: RouteRuntimes,
        target: TargetClient,
        replies: WebhookReplyExecutor,
        scheduler: DrainScheduler,
        inbox: DispatcherInbox,
        locks: DrainLocks,
        logger: Logger,
        options: ResolvedDispatcherOptions,
      ) =>
        new LaneDrainer(
          routes,
          target,
          replies,
          scheduler,
          inbox,
          locks,
          childLogger(logger).child({}, { redact: { paths: [] } }),
          options,
        ),
    },
    {
      provide: DeliveryWorkers,
      inject: [
        QUEUE_CONTEXT,
        LaneDrainer,
        DrainLocks,
        ConfigService,
        RELAYGRAM_LOGGER,
        DISPATCHER_OPTIONS,
      ],
      useFactory: (
        ctx: QueueContext,
        drainer: LaneDrainer,
        locks: DrainLocks,
        config: ConfigService,
        logger: Logger,
        options: ResolvedDispatcherOptions,
      ) =>
        new DeliveryWorkers(ctx, drainer, locks, childLogger(logger), {
          redisUrl: config.config.redis.url,
          stalledIntervalMs: options.stalledIntervalMs,
          lockDurationMs: options.lockDurationMs,
          maxStalledCount: options.maxStalledCount,
        }),
    },
    {
      provide: MaintenanceScheduler,
      inject: [
        QUEUE_CONTEXT,
        ConfigService,
        LaneReconciler,
        DeadLetterStore,
        RelaygramMetrics,
        RELAYGRAM_LOGGER,
        DISPATCHER_OPTIONS,
        getQueueToken(QueueName.Maintenance),
      ],
      useFactory: (
        ctx: QueueContext,
        config: ConfigService,
        reconciler: LaneReconciler,
        dead: DeadLetterStore,
        metrics: RelaygramMetrics,
        logger: Logger,
        options: ResolvedDispatcherOptions,
        queue: Queue<MaintenanceJob>,
      ) =>
        new MaintenanceScheduler(
          ctx,
          config,
          reconciler,
          dead,
          metrics,
          childLogger(logger),
          {
            reconcileEveryMs: options.reconcileEveryMs,
            routeRemovedAfterMs: options.routeRemovedAfterMs,
          },
          queue,
        ),
    },
    MaintenanceProcessor,
    DispatcherLifecycle,
  ],
})
export class DispatcherModule extends ConfigurableModuleClass {}
