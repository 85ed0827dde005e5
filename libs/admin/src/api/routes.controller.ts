import { Controller, Get, Inject, Param, UseFilters, UseGuards } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService, type RouteConfig as ConfiguredRoute } from '@relaygram/config';
import { displayUrl, MinuteStatsReader, readFailingRoutes } from '@relaygram/observability';
import { QUEUE_CONTEXT, readRouteStats, type QueueContext } from '@relaygram/queue';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ADMIN_DOCS } from './admin-api.docs';
import { AdminErrorFilter } from './admin-error.filter';
import { notFound } from './admin-params';

/**
 * Routes with their queue: depth, lanes, delivered, dead letters, the last error, why
 * they fail if they do, and their last hour in minute buckets.
 */
@Controller('admin/api/routes')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class RoutesController {
  constructor(
    private readonly config: ConfigService,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    private readonly minutes: MinuteStatsReader,
  ) {}

  @Get()
  @RouteConfig(ADMIN_DOCS.routes)
  async list() {
    return { routes: await Promise.all(this.config.config.routes.map((r) => this.view(r))) };
  }

  @Get(':route')
  @RouteConfig(ADMIN_DOCS.route)
  async one(@Param('route') name: string) {
    const route = this.config.route(name);
    if (!route) throw notFound('route', name);
    return this.view(route);
  }

  /** The route's last hour in minute buckets, for the admin page's charts. */
  @Get(':route/charts')
  @RouteConfig(ADMIN_DOCS.routeCharts)
  async charts(@Param('route') name: string) {
    const route = this.config.route(name);
    if (!route) throw notFound('route', name);
    return { route: route.name, ...(await this.minutes.read('route', route.name)) };
  }

  private async view(route: ConfiguredRoute) {
    const [stats, failing] = await Promise.all([
      readRouteStats(this.ctx, route.name),
      readFailingRoutes(this.ctx, [route.name]),
    ]);
    return {
      name: route.name,
      bots: route.bots,
      target: displayUrl(route.targetUrl),
      format: route.format,
      ordering: route.ordering,
      concurrency: route.concurrency,
      queue: stats.queued,
      lanes: stats.lanes,
      delivered: stats.delivered,
      dead: stats.dead,
      dead_total: stats.deadTotal,
      last_status: stats.lastStatus ?? null,
      last_error: stats.lastError ?? null,
      last_error_at: stats.lastErrorAt ? new Date(stats.lastErrorAt).toISOString() : null,
      failing: failing.get(route.name) ?? null,
    };
  }
}
