import { Module } from '@nestjs/common';
import { PacingModule } from '@relaygram/pacing';
import { AdminOverviewController } from './api/admin-overview.controller';
import { BotsController } from './api/bots.controller';
import { BroadcastsController } from './api/broadcasts.controller';
import { DeadLettersController } from './api/dead-letters.controller';
import { DeliveryLogController } from './api/delivery-log.controller';
import { RoutesController } from './api/routes.controller';
import { AdminEnabledGuard, AdminTokenGuard } from './auth/admin-token.guard';
import { AdminPageController } from './page/admin-page.controller';
import { ApiReferenceController } from './reference/api-reference.controller';
import { AdminTelegramClients } from './telegram/admin-telegram-clients';

/**
 * The admin API (`/admin/api`), page (`/admin`), the management OpenAPI document
 * (`/admin/openapi.json`) and its reference page (`/admin/reference`), on the management listener only
 * (the bootstrap answers 404 for them on the public port). Uses what CoreModule
 * provides: the config, the queue store and observability.
 */
@Module({
  imports: [PacingModule],
  controllers: [
    AdminPageController,
    ApiReferenceController,
    AdminOverviewController,
    BotsController,
    RoutesController,
    DeadLettersController,
    DeliveryLogController,
    BroadcastsController,
  ],
  providers: [AdminEnabledGuard, AdminTokenGuard, AdminTelegramClients],
})
export class AdminModule {}
