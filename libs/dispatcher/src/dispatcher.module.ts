import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { Feature, QueueName } from '@relaygram/contracts';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import { PacingModule } from '@relaygram/pacing';
import { QUEUE_CONTEXT, type QueueContext, type RelaygramRedis } from '@relaygram/queue';
import type { Logger } from 'pino';
import { BroadcastRunner } from './broadcast/broadcast-runner';
import { DeliveryAttempts } from './delivery/delivery-attempts';
import { TargetClient } from './delivery/target-client';
import { WebhookReplyExecutor } from './delivery/webhook-reply.executor';
import { DispatcherLifecycle } from './dispatcher-lifecycle';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  resolveDispatcherOptions,
  type DispatcherModuleOptions,
} from './dispatcher-options';
import { DispatcherReadiness } from './dispatcher-readiness';
import { RouteFailureTracker } from './health/route-failure-tracker';
import { WorkerStallMonitor } from './health/worker-stall.monitor';
import { DispatcherInbox } from './lanes/dispatcher-inbox';
import { DrainLocks } from './lanes/drain-locks';
import { LaneDrainer } from './lanes/lane-drainer';
import { LaneMaintenance } from './maintenance/lane-maintenance';
import {
  MAINTENANCE_CONNECTION,
  MaintenanceConnectionModule,
} from './maintenance/maintenance-connection';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { MaintenanceScheduler } from './maintenance/maintenance-scheduler';
import { OutboxSender } from './outbox/outbox-sender';
import { RouteRuntimes } from './routes/route-runtimes';
import { DeliveryWorkers } from './workers/delivery-workers';

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } =
  new ConfigurableModuleBuilder<DispatcherModuleOptions>().setClassMethodName('forRoot').build();

/**
 * The dispatcher feature: everything `apps/dispatcher` and `apps/standalone` run for it.
 * Import it as it is (production defaults) or with `DispatcherModule.forRoot({...})`
 * to tune it (tests shorten the reconcile period and grace times). It relies on the
 * global config, queue and observability modules of CoreModule.
 *
 * Its classes take what they need by injection; the two values built here are the
 * resolved options (one typed object every class reads its settings from) and the
 * dispatcher's child of the process logger. Webhook replies use the process's one
 * OutboundPacer (PacingModule): they share its budgets, and its fallback during a
 * Redis outage, with the gateway of a standalone process.
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
      provide: DISPATCHER_LOGGER,
      inject: [RELAYGRAM_LOGGER],
      useFactory: (logger: Logger) => logger.child({ component: Feature.Dispatcher }),
    },
    RouteRuntimes,
    RouteFailureTracker,
    TargetClient,
    WebhookReplyExecutor,
    DeliveryAttempts,
    OutboxSender,
    BroadcastRunner,
    DrainLocks,
    DispatcherInbox,
    LaneDrainer,
    DeliveryWorkers,
    LaneMaintenance,
    MaintenanceScheduler,
    MaintenanceProcessor,
    WorkerStallMonitor,
    DispatcherReadiness,
    DispatcherLifecycle,
  ],
})
export class DispatcherModule extends ConfigurableModuleClass {}
