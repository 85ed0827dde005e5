import { All, Controller, Get, NotFoundException, UseFilters, UseGuards } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService } from '@relaygram/config';
import { DEAD_REASONS } from '@relaygram/contracts';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ADMIN_DOCS } from './admin-api.docs';
import { AdminErrorFilter } from './admin-error.filter';

/** What the admin page needs first: proof the token works, and the names for its filters. */
@Controller('admin/api')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class AdminOverviewController {
  constructor(private readonly config: ConfigService) {}

  @Get()
  @RouteConfig(ADMIN_DOCS.overview)
  overview() {
    const { config } = this.config;
    return {
      service: this.config.service,
      bots: config.bots.map((b) => b.id),
      routes: config.routes.map((r) => r.name),
      dead_reasons: DEAD_REASONS,
    };
  }

  /** Unknown admin paths: after the token check, so they reveal nothing to a stranger. */
  @All('*')
  @RouteConfig(ADMIN_DOCS.unknown)
  unknown() {
    throw new NotFoundException({ error: 'no such admin API endpoint' });
  }
}
