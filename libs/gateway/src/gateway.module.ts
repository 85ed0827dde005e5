import { Module, type DynamicModule } from '@nestjs/common';
import { GatewayHealthService } from './health/gateway-health.service';
import { GatewayRoutesRegistrar } from './gateway-routes.registrar';
import { GATEWAY_OPTIONS, type GatewayOptions } from './gateway.options';
import { GatewayTelegramService } from './telegram/gateway-telegram.service';

/**
 * The gateway feature: the REST API under /api/v1, the Bot API drop-in and the
 * gateway's /healthz part. Needs CoreModule (config, metrics, health, logger) beside it.
 * `GatewayModule` as is runs with production defaults; `forRoot` tunes it (tests).
 */
@Module({
  providers: [GatewayTelegramService, GatewayHealthService, GatewayRoutesRegistrar],
})
export class GatewayModule {
  static forRoot(options: GatewayOptions = {}): DynamicModule {
    return {
      module: GatewayModule,
      providers: [{ provide: GATEWAY_OPTIONS, useValue: options }],
    };
  }
}
