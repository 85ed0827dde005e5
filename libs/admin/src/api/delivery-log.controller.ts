import {
  Controller,
  Get,
  NotFoundException,
  Param,
  Query,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService, deliveryLogOf, formatDuration } from '@relaygram/config';
import { attemptView, DeliveryLogReader, updateTraceView } from '@relaygram/queue';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { AdminErrorFilter } from './admin-error.filter';
import { attemptQuery, notFound, updateIdParam, type QueryParams } from './admin-params';
import { DELIVERY_LOG_DOCS } from './delivery-log.docs';

/**
 * The delivery log: what happened to one update (its fan-out, each delivery's state
 * and attempts with their answers), and a route's recent attempts.
 */
@Controller('admin/api')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class DeliveryLogController {
  constructor(
    private readonly config: ConfigService,
    private readonly reader: DeliveryLogReader,
  ) {}

  @Get('updates/:bot/:updateId')
  @RouteConfig(DELIVERY_LOG_DOCS.updateTrace)
  async trace(@Param('bot') bot: string, @Param('updateId') raw: string) {
    if (!this.config.bot(bot)) throw notFound('bot', bot);
    const updateId = updateIdParam(raw);
    const trace = await this.reader.trace(bot, updateId);
    if (!trace) throw this.#notLogged(bot, updateId);
    return updateTraceView(trace);
  }

  @Get('routes/:route/attempts')
  @RouteConfig(DELIVERY_LOG_DOCS.routeAttempts)
  async attempts(@Param('route') route: string, @Query() query: QueryParams) {
    if (!this.config.route(route)) throw notFound('route', route);
    const page = await this.reader.attempts(route, attemptQuery(query));
    return { route, items: page.attempts.map(attemptView), next_cursor: page.nextCursor };
  }

  #notLogged(bot: string, updateId: number): NotFoundException {
    const log = deliveryLogOf(this.config.config);
    const keeps = log.enabled
      ? `it keeps updates for ${formatDuration(log.maxAgeMs)} (delivery_log.max_age) and at most ${log.updatesPerBot} per bot (delivery_log.updates_per_bot)`
      : 'it is off (delivery_log.enabled: false)';
    return new NotFoundException({
      error: `update ${updateId} of bot ${bot} is not in the delivery log: ${keeps}`,
    });
  }
}
