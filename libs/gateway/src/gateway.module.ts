import { Module } from '@nestjs/common';
import { PacingModule } from '@relaygram/pacing';
import { GatewayHealthService } from './health/gateway-health.service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { GatewayPacing } from './pacing/gateway-pacing.service';
import { GatewayRoutesRegistrar } from './gateway-routes.registrar';
import { GatewayModuleDefinition } from './gateway.options';
import { GatewayTelegramService } from './telegram/gateway-telegram.service';
import { PullMaintenance } from './pull/pull-maintenance';
import { PullUpdatesService } from './pull/pull-updates.service';

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
    IdempotencyStore,
  ],
})
export class GatewayModule extends GatewayModuleDefinition {}
