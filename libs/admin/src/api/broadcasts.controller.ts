import {
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService } from '@relaygram/config';
import { BROADCAST_MAX_RECIPIENTS } from '@relaygram/contracts';
import {
  BroadcastStore,
  broadcastView,
  type BroadcastAction,
  type BroadcastRecord,
} from '@relaygram/queue';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { AdminErrorFilter } from './admin-error.filter';
import { notFound, pageSize, type QueryParams } from './admin-params';
import {
  BROADCAST_LIST_MAX_OFFSET,
  botParam,
  broadcastRef,
  failureReason,
  offsetParam,
} from './broadcast-params';
import { BROADCAST_DOCS } from './broadcasts.docs';

/** What a 409 says each action needs. */
const ALLOWED: Record<BroadcastAction, string> = {
  pause: 'only a running broadcast can be paused',
  resume: 'only a paused broadcast can be resumed',
  cancel: 'only a running or paused broadcast can be cancelled',
};

/**
 * Broadcasts of every bot with their progress, pause / resume / cancel, and the
 * recipients that were not sent. A broadcast is listed from its start (while its
 * recipients stream in it is `loading` and in no bot's list).
 */
@Controller('admin/api/broadcasts')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class BroadcastsController {
  constructor(
    private readonly config: ConfigService,
    private readonly store: BroadcastStore,
  ) {}

  /** Newest first over the bots: each bot's list is newest first, so its first offset + limit suffice. */
  @Get()
  @RouteConfig(BROADCAST_DOCS.list)
  async list(@Query() query: QueryParams) {
    const bot = botParam(query);
    const limit = pageSize(query);
    const offset = offsetParam(query, BROADCAST_LIST_MAX_OFFSET);
    const bots = bot ? [bot] : this.config.config.bots.map((b) => b.id);
    const lists = await Promise.all(bots.map((b) => this.store.list(b, 0, offset + limit + 1)));
    const merged = lists.flat().sort(newestFirst);
    const now = Date.now();
    return {
      items: merged.slice(offset, offset + limit).map((record) => rowOf(record, now)),
      next_offset: merged.length > offset + limit ? offset + limit : null,
    };
  }

  @Get(':bot/:id')
  @RouteConfig(BROADCAST_DOCS.one)
  async one(@Param('bot') rawBot: string, @Param('id') rawId: string) {
    const { bot, id } = broadcastRef(rawBot, rawId);
    return rowOf(await this.record(bot, id));
  }

  @Post(':bot/:id/pause')
  @RouteConfig(BROADCAST_DOCS.pause)
  @HttpCode(200)
  pause(@Param('bot') bot: string, @Param('id') id: string) {
    return this.control(bot, id, 'pause');
  }

  @Post(':bot/:id/resume')
  @RouteConfig(BROADCAST_DOCS.resume)
  @HttpCode(200)
  resume(@Param('bot') bot: string, @Param('id') id: string) {
    return this.control(bot, id, 'resume');
  }

  @Post(':bot/:id/cancel')
  @RouteConfig(BROADCAST_DOCS.cancel)
  @HttpCode(200)
  cancel(@Param('bot') bot: string, @Param('id') id: string) {
    return this.control(bot, id, 'cancel');
  }

  /** Recipients that were not sent, in the order they ended, with Telegram's answer. */
  @Get(':bot/:id/failures')
  @RouteConfig(BROADCAST_DOCS.failures)
  async failures(
    @Param('bot') rawBot: string,
    @Param('id') rawId: string,
    @Query() query: QueryParams,
  ) {
    const { bot, id } = broadcastRef(rawBot, rawId);
    const reason = failureReason(query);
    const offset = offsetParam(query, BROADCAST_MAX_RECIPIENTS);
    const limit = pageSize(query);
    await this.record(bot, id);
    const page = await this.store.failures(bot, id, reason, offset, limit);
    const end = offset + page.items.length;
    return {
      bot,
      id,
      reason,
      total: page.total,
      items: page.items,
      next_offset: end < page.total && page.items.length > 0 ? end : null,
    };
  }

  private async control(rawBot: string, rawId: string, action: BroadcastAction) {
    const { bot, id } = broadcastRef(rawBot, rawId);
    const result = await this.store.control(bot, id, action);
    if (!result.ok) {
      if (result.status === 'missing') throw notFound('broadcast', `${bot}/${id}`);
      throw new ConflictException({
        error: `broadcast ${id} is ${result.status}: ${ALLOWED[action]}`,
        status: result.status,
      });
    }
    return rowOf(await this.record(bot, id));
  }

  private async record(bot: string, id: string): Promise<BroadcastRecord> {
    const record = await this.store.read(bot, id);
    if (!record) throw notFound('broadcast', `${bot}/${id}`);
    return record;
  }
}

/** A broadcast as the admin API lists it: its client's view, with its bot and client. */
function rowOf(record: BroadcastRecord, now = Date.now()) {
  return { bot: record.bot, client: record.client, ...broadcastView(record, now) };
}

function newestFirst(a: BroadcastRecord, b: BroadcastRecord): number {
  return b.createdAt - a.createdAt || (a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : 0);
}
