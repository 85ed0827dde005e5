import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { createRedis, type RelaygramRedis } from '@relaygram/queue';

export const MAINTENANCE_CONNECTION = Symbol('RELAYGRAM_MAINTENANCE_CONNECTION');

/**
 * BullMQ workers need a connection that waits for Redis instead of failing fast (the
 * shared command connection fails fast), and an ioredis instance rather than options so
 * that cluster and Sentinel URLs work. BullMQ does not close a connection it was given:
 * this does, once the workers are closed.
 */
@Injectable()
class MaintenanceConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(MAINTENANCE_CONNECTION) private readonly connection: RelaygramRedis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}

@Module({
  providers: [
    {
      provide: MAINTENANCE_CONNECTION,
      inject: [ConfigService],
      useFactory: (config: ConfigService) =>
        createRedis(config.config.redis.url, {
          mode: 'blocking',
          connectionName: 'relaygram-dispatcher-maintenance',
        }),
    },
    MaintenanceConnectionCloser,
  ],
  exports: [MAINTENANCE_CONNECTION],
})
export class MaintenanceConnectionModule {}
