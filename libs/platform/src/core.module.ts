import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@relaygram/config';
import { QueueModule } from '@relaygram/queue';
import { ObservabilityModule, type RelaygramMetrics } from '@relaygram/observability';
import type { BootContext } from './app-definition';

/**
 * What every Relaygram process has under its features: the loaded config, the Redis
 * store, health and metrics. An app's root module is this plus its feature modules.
 */
@Module({})
export class CoreModule {
  static forRoot(
    boot: Pick<BootContext, 'config' | 'env' | 'service'> & Partial<Pick<BootContext, 'logger'>>,
    options: { metrics?: RelaygramMetrics } = {},
  ): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        ConfigModule.forRoot({
          config: boot.config,
          env: boot.env,
          service: boot.service,
          logger: boot.logger,
        }),
        QueueModule.forRoot({
          redisUrl: boot.config.redis.url,
          prefix: boot.config.redis.prefix,
          connectionName: `relaygram-${boot.service}`,
          dieAfterEnqueue: boot.env.faults.dieAfterEnqueue,
        }),
        ObservabilityModule.forRoot({
          service: boot.service,
          metrics: options.metrics,
          logger: boot.logger,
        }),
      ],
    };
  }
}
