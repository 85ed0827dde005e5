import {
  BadRequestException,
  Controller,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService, outboundOf, type BotConfig } from '@relaygram/config';
import { OutboundPacer } from '@relaygram/pacing';
import {
  BotStatusReader,
  displayUrl,
  MinuteStatsReader,
  webhookProblem,
  type BotStatus,
} from '@relaygram/observability';
import { QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import type { TelegramClient } from '@relaygram/telegram';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { AdminTelegramClients } from '../telegram/admin-telegram-clients';
import { ADMIN_DOCS } from './admin-api.docs';
import { AdminErrorFilter } from './admin-error.filter';
import { notFound } from './admin-params';
import { telegramFailure } from './telegram-failure';

interface PollerView {
  /** Some replica holds the bot's poller lease. */
  leased: boolean;
  lease_ttl_ms: number | null;
  /** The next getUpdates offset kept in Redis. */
  offset: number | null;
}

/** The chats a bot view lists among its pauses, longest first; the total is given too. */
const MAX_PAUSED_CHATS_SHOWN = 50;

/**
 * Bots: their health as /healthz shows it, their configuration, the poller, the webhook,
 * and their outbound budgets with the pauses in force (chat ids only here, behind the
 * admin token; /healthz shows counts).
 */
@Controller('admin/api/bots')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminErrorFilter)
export class BotsController {
  constructor(
    private readonly config: ConfigService,
    private readonly reader: BotStatusReader,
    private readonly telegram: AdminTelegramClients,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    private readonly pacer: OutboundPacer,
    private readonly charts: MinuteStatsReader,
  ) {}

  @Get()
  @RouteConfig(ADMIN_DOCS.bots)
  async list() {
    const statuses = await this.reader.read({ redis: this.redisReady() });
    const views = await Promise.all(
      this.config.config.bots.map((bot, i) => this.view(bot, statuses[i])),
    );
    return { bots: views };
  }

  @Get(':bot')
  @RouteConfig(ADMIN_DOCS.bot)
  async one(@Param('bot') id: string) {
    const bot = this.bot(id);
    const statuses = await this.reader.read({ redis: this.redisReady() });
    return this.view(
      bot,
      statuses.find((s) => s.id === bot.id),
    );
  }

  /** The bot's last hour in minute buckets, for the admin page's charts. */
  @Get(':bot/charts')
  @RouteConfig(ADMIN_DOCS.botCharts)
  async chartsOf(@Param('bot') id: string) {
    const bot = this.bot(id);
    return { bot: bot.id, ...(await this.charts.read('bot', bot.id)) };
  }

  /** Telegram's getWebhookInfo now, with what is wrong with it. */
  @Get(':bot/webhook')
  @RouteConfig(ADMIN_DOCS.webhookInfo)
  async webhookInfo(@Param('bot') id: string) {
    const bot = this.bot(id);
    const info = await this.call(bot, (client) =>
      client.call<Record<string, unknown>>('getWebhookInfo'),
    );
    return this.webhookView(bot, info);
  }

  /**
   * setWebhook with the configured URL, secret, allowed_updates and max_connections,
   * never dropping pending updates (SPEC section 3); answers the webhook info after.
   */
  @Post(':bot/webhook')
  @RouteConfig(ADMIN_DOCS.setWebhook)
  @HttpCode(200)
  async setWebhook(@Param('bot') id: string) {
    const bot = this.bot(id);
    const webhook = bot.webhook;
    if (bot.mode !== 'webhook' || !webhook) {
      throw new BadRequestException({
        error: `bot ${bot.id} is in ${bot.mode} mode: it has no webhook to set`,
      });
    }
    const info = await this.call(bot, async (client) => {
      await client.call('setWebhook', {
        url: webhook.url,
        secret_token: webhook.secretToken.reveal(),
        allowed_updates: [...bot.allowedUpdates],
        max_connections: webhook.maxConnections,
        drop_pending_updates: false,
      });
      return client.call<Record<string, unknown>>('getWebhookInfo');
    });
    return { status: 'set', ...this.webhookView(bot, info) };
  }

  private bot(id: string): BotConfig {
    const bot = this.config.bot(id);
    if (!bot) throw notFound('bot', id);
    return bot;
  }

  private async call<T>(bot: BotConfig, fn: (client: TelegramClient) => Promise<T>): Promise<T> {
    const client = this.telegram.get(bot.id);
    if (!client) throw notFound('bot', bot.id);
    try {
      return await fn(client);
    } catch (error) {
      throw telegramFailure(error);
    }
  }

  private webhookView(bot: BotConfig, info: Record<string, unknown>) {
    const shown: Record<string, unknown> = { ...info };
    if (typeof info.url === 'string') shown.url = displayUrl(info.url);
    const view: Record<string, unknown> = { bot: bot.id, mode: bot.mode, webhook: shown };
    if (bot.webhook) {
      view.expected_url = displayUrl(bot.webhook.url);
      const problem = webhookProblem(info, bot.webhook.url);
      if (problem) view.problem = problem;
    } else if (typeof info.url === 'string' && info.url !== '') {
      view.problem =
        'a webhook is set for a polling bot: getUpdates answers 409 until it is deleted';
    }
    return view;
  }

  private async view(bot: BotConfig, status: BotStatus | undefined) {
    const view: Record<string, unknown> = {
      ...(status ?? { id: bot.id, mode: bot.mode }),
      username: bot.username ?? null,
      default: bot.default,
      allowed_updates: bot.allowedUpdates,
    };
    if (bot.mode === 'polling') view.poller = await this.poller(bot.id);
    view.outbound = await this.outbound(bot);
    return view;
  }

  /** The bot's send budgets as configured, and the pauses Telegram's 429s set. */
  private async outbound(bot: BotConfig) {
    const config = outboundOf(bot);
    const pauses = await this.pacer.pauses(bot.id);
    const pause = (until: number) => ({
      until: new Date(until).toISOString(),
      retry_after: Math.max(1, Math.ceil((until - pauses.now) / 1000)),
    });
    return {
      pacing: config.enabled ? pauses.mode : 'off',
      per_second: config.perSecond,
      per_chat_per_second: config.perChatPerSecond,
      chat_burst: config.chatBurst,
      per_group_per_minute: config.perGroupPerMinute,
      max_wait_ms: config.maxWaitMs,
      broadcast_share: config.broadcastShare,
      pause: pauses.botUntil === undefined ? null : pause(pauses.botUntil),
      paused_chats: pauses.chats
        .sort((a, b) => b.until - a.until)
        .slice(0, MAX_PAUSED_CHATS_SHOWN)
        .map((chat) => ({ chat: chat.chat, ...pause(chat.until) })),
      paused_chats_total: pauses.chats.length,
    };
  }

  private async poller(bot: string): Promise<PollerView | null> {
    if (!this.redisReady()) return null;
    const { redis, keys } = this.ctx;
    const [[, ttl], [, offset]] = ((await redis
      .pipeline()
      .pttl(keys.pollerLease(bot))
      .get(keys.pollerOffset(bot))
      .exec()) ?? []) as [unknown, unknown][];
    const ms = Number(ttl);
    return {
      leased: ms > 0 || ms === -1,
      lease_ttl_ms: ms > 0 ? ms : null,
      offset: offset === null || offset === undefined ? null : Number(offset),
    };
  }

  private redisReady(): boolean {
    return this.ctx.redis.status === 'ready';
  }
}
