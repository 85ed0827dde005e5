import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { PacingModule } from '@relaygram/pacing';
import { createRedis, REDIS, type RelaygramRedis } from '@relaygram/queue';
import { GatewayHealthService } from './health/gateway-health.service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { GatewayPacing } from './pacing/gateway-pacing.service';
import { GatewayRoutesRegistrar } from './gateway-routes.registrar';
import { GATEWAY_OPTIONS, type GatewayOptions } from './gateway.options';
import { GatewayTelegramService } from './telegram/gateway-telegram.service';
import { PullMaintenance } from './pull/pull-maintenance';
import { PullUpdatesService } from './pull/pull-updates.service';

/** Closes the idempotency keys' subscriber connection once requests have stopped. */
@Injectable()
class IdempotencyLifecycle implements OnApplicationShutdown {
  constructor(@Inject(IdempotencyStore) private readonly store: IdempotencyStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/**
 * The gateway feature: the REST API under /api/v1, the Bot API drop-in and the
 * gateway's /healthz part, with outbound pacing (PacingModule) and idempotency keys.
 * Needs CoreModule (config, metrics, health, logger) beside it.
 * `GatewayModule` as is runs with production defaults; `forRoot` tunes it (tests).
 */
@Module({
  imports: [PacingModule],
  providers: [
    GatewayTelegramService,
    GatewayHealthService,
    GatewayPacing,
    GatewayRoutesRegistrar,
    PullUpdatesService,
    PullMaintenance,
    {
      provide: IdempotencyStore,
      inject: [REDIS, ConfigService],
      useFactory: (redis: RelaygramRedis, config: ConfigService) =>
        new IdempotencyStore(redis, new OutboundKeys(config.config.redis.prefix), () =>
          createRedis(config.config.redis.url, {
            connectionName: `relaygram-${config.service}-idempotency`,
            mode: 'blocking',
          }),
        ),
    },
    IdempotencyLifecycle,
  ],
})
export class GatewayModule {
  static forRoot(options: GatewayOptions = {}): DynamicModule {
    return {
      module: GatewayModule,
      providers: [{ provide: GATEWAY_OPTIONS, useValue: options }],
    };
  }
}
