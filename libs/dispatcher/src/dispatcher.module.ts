import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER, RelaygramMetrics } from '@relaygram/observability';
import {
  DeadLetterStore,
  DrainScheduler,
  LaneReconciler,
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
import { LaneDrainer } from './lanes/lane-drainer';
import { MaintenanceScheduler } from './maintenance/maintenance-scheduler';
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
  providers: [
    {
      provide: DISPATCHER_OPTIONS,
      inject: [{ token: MODULE_OPTIONS_TOKEN, optional: true }],
      useFactory: (options?: DispatcherModuleOptions) => resolveDispatcherOptions(options),
    },
    {
      provide: RouteRuntimes,
      inject: [RelaygramMetrics],
      useFactory: (metrics: RelaygramMetrics) => new RouteRuntimes(metrics),
    },
    { provide: TargetClient, useFactory: () => new TargetClient() },
    {
      provide: WebhookReplyExecutor,
      inject: [ConfigService, RelaygramMetrics, RELAYGRAM_LOGGER],
      useFactory: (config: ConfigService, metrics: RelaygramMetrics, logger: Logger) =>
        new WebhookReplyExecutor(config.config, metrics, childLogger(logger)),
    },
    {
      provide: LaneDrainer,
      inject: [
        RouteRuntimes,
        TargetClient,
        WebhookReplyExecutor,
        DrainScheduler,
        RELAYGRAM_LOGGER,
        DISPATCHER_OPTIONS,
      ],
      useFactory: (
        routes: RouteRuntimes,
        target: TargetClient,
        replies: WebhookReplyExecutor,
        scheduler: DrainScheduler,
        logger: Logger,
        options: ResolvedDispatcherOptions,
      ) => new LaneDrainer(routes, target, replies, scheduler, childLogger(logger), options),
    },
    {
      provide: DeliveryWorkers,
      inject: [QUEUE_CONTEXT, LaneDrainer, ConfigService, RELAYGRAM_LOGGER, DISPATCHER_OPTIONS],
      useFactory: (
        ctx: QueueContext,
        drainer: LaneDrainer,
        config: ConfigService,
        logger: Logger,
        options: ResolvedDispatcherOptions,
      ) =>
        new DeliveryWorkers(ctx, drainer, childLogger(logger), {
          redisUrl: config.config.redis.url,
          stalledIntervalMs: options.stalledIntervalMs,
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
      ],
      useFactory: (
        ctx: QueueContext,
        config: ConfigService,
        reconciler: LaneReconciler,
        dead: DeadLetterStore,
        metrics: RelaygramMetrics,
        logger: Logger,
        options: ResolvedDispatcherOptions,
      ) =>
        new MaintenanceScheduler(ctx, config, reconciler, dead, metrics, childLogger(logger), {
          redisUrl: config.config.redis.url,
          reconcileEveryMs: options.reconcileEveryMs,
          routeRemovedAfterMs: options.routeRemovedAfterMs,
        }),
    },
    DispatcherLifecycle,
  ],
})
export class DispatcherModule extends ConfigurableModuleClass {}
