import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UseFilters,
  UseGuards,
  ConflictException,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService } from '@relaygram/config';
import {
  DeadLetterStore,
  deadLetterView,
  laneResolverFor,
  type DeadLetterFilter,
} from '@relaygram/queue';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ADMIN_DOCS } from './admin-api.docs';
import { AdminErrorFilter } from './admin-error.filter';
import {
  badParameter,
  cursor,
  deadLetterFilter,
  deliveryId,
  notFound,
  pageSize,
  type QueryParams,
} from './admin-params';

/** Re-sends that failed are listed up to this many in the answer. */
const LISTED_FAILURES = 20;

/**
 * Dead letters: list (filters, pages newest first), look at one, re-send one or all of
 * a route or bot to the tail of its lane with the route's current config, delete.
 */
@Controller('admin/api/dead-letters')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class DeadLettersController {
  constructor(
    private readonly store: DeadLetterStore,
    private readonly config: ConfigService,
  ) {}

  @Get()
  @RouteConfig(ADMIN_DOCS.deadLetters)
  async list(@Query() query: QueryParams) {
    const filter = deadLetterFilter(query);
    const limit = pageSize(query);
    const after = cursor(query);
    try {
      const page = await this.store.list(filter, limit, after);
      return { items: page.items.map(deadLetterView), next_cursor: page.nextCursor ?? null };
    } catch (error) {
      if (error instanceof RangeError) throw badParameter('cursor', 'not a cursor of this list');
      throw error;
    }
  }

  /** Re-send every dead letter of a route or a bot (optionally of one reason), oldest first. */
  @Post('replay')
  @RouteConfig(ADMIN_DOCS.replayMatching)
  @HttpCode(200)
  async replayMatching(@Body() body: unknown, @Query() query: QueryParams) {
    const filter = deadLetterFilter({ ...query, ...bodyParams(body) });
    if (!filter.route && !filter.bot) {
      throw new BadRequestException({
        error: 'route or bot: give at least one (re-sending every dead letter needs a filter)',
        parameter: 'route',
      });
    }
    const failures: { delivery_id: string; error: string }[] = [];
    const result = await this.store.replayAll(
      filter,
      laneResolverFor(this.config.config),
      (_done, outcome, id) => {
        if (typeof outcome === 'object' && failures.length < LISTED_FAILURES)
          failures.push({ delivery_id: id, error: outcome.error });
      },
    );
    return { status: 'done', filter: filterView(filter), ...result, failures };
  }

  @Get(':id')
  @RouteConfig(ADMIN_DOCS.deadLetter)
  async one(@Param('id') raw: string) {
    const id = deliveryId(raw);
    const letter = await this.store.get(id);
    if (!letter) throw notFound('dead letter', id);
    return deadLetterView(letter);
  }

  @Post(':id/replay')
  @RouteConfig(ADMIN_DOCS.replayOne)
  @HttpCode(200)
  async replay(@Param('id') raw: string) {
    const id = deliveryId(raw);
    const outcome = await this.store.replay(id, laneResolverFor(this.config.config));
    if (outcome === 'missing') throw notFound('dead letter', id);
    if (outcome !== 'queued') throw new ConflictException({ error: outcome.error });
    return { status: 'queued', delivery_id: id };
  }

  @Delete(':id')
  @RouteConfig(ADMIN_DOCS.remove)
  async remove(@Param('id') raw: string) {
    const id = deliveryId(raw);
    if (!(await this.store.delete(id))) throw notFound('dead letter', id);
    return { status: 'deleted', delivery_id: id };
  }
}

/** A JSON body's filter fields; anything but an object (or no body) is no filter. */
function bodyParams(body: unknown): QueryParams {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new BadRequestException({ error: 'body: must be a JSON object' });
  const params: QueryParams = {};
  for (const key of ['route', 'bot', 'reason']) {
    const value = (body as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw badParameter(key, 'must be a string');
    params[key] = value;
  }
  return params;
}

function filterView(filter: DeadLetterFilter): Record<string, string> {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
}
