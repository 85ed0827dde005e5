import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ConfigService, type BotConfig } from '@relaygram/config';
import { HealthRegistry, RelaygramMetrics, type BotHealth } from '@relaygram/observability';
import {
  OutboundPacer,
  countPace,
  reportTelegram429,
  type CallPlan,
  type PaceResult,
} from '@relaygram/pacing';
import { TelegramError } from '@relaygram/telegram';

/** Telegram's own words for a 429, which frameworks parse. */
export function tooManyRequestsDescription(retryAfter: number): string {
  return `Too Many Requests: retry after ${retryAfter}`;
}

/** The 429 a refused call gets, built as the Bot API client builds Telegram's own. */
export function pacedRefusal(method: string, retryAfter: number): TelegramError {
  return new TelegramError({
    method,
    errorCode: 429,
    description: tooManyRequestsDescription(retryAfter),
    httpStatus: 429,
    retryAfter,
  });
}

/**
 * The gateway's side of outbound pacing: takes slots from the process's pacer,
 * counts waits, refusals and Telegram 429s, and shows pacing in /healthz (each bot's
 * pauses, and `pacing: "degraded"` while Redis is away) and in the pause gauges.
 */
@Injectable()
export class GatewayPacing implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly pacer: OutboundPacer,
    private readonly metrics: RelaygramMetrics,
    private readonly registry: HealthRegistry,
    private readonly config: ConfigService,
  ) {}

  onModuleInit(): void {
    this.registry.addSummarySource('pacing', () => ({ pacing: this.pacer.mode }));
    this.registry.addBotHealthSource('pacing', () => this.botPauses());
    this.metrics.addScrapeHook(this.pacer, () => this.refreshGauges());
  }

  onModuleDestroy(): void {
    this.registry.removeBotHealthSource('pacing');
    this.metrics.removeScrapeHook(this.pacer);
  }

  async pace(
    bot: BotConfig,
    method: string,
    params: Readonly<Record<string, unknown>>,
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<PaceResult> {
    const result = await this.pacer.acquire(bot, method, params, signal);
    countPace(this.metrics, bot.id, result);
    return result;
  }

  /** A Telegram 429 on a paced call: the pause for every replica, and the count. */
  async telegram429(bot: BotConfig, plan: CallPlan, retryAfter: number | undefined): Promise<void> {
    await reportTelegram429(this.pacer, this.metrics, bot, plan, retryAfter);
  }

  /** Per bot: the pauses in force, as /healthz shows them. */
  async botPauses(): Promise<BotHealth[]> {
    return Promise.all(
      this.config.config.bots.map(async (bot) => {
        const pauses = await this.pacer.pauses(bot.id);
        const pause =
          pauses.botUntil !== undefined
            ? { scope: 'bot', retry_after: Math.ceil((pauses.botUntil - pauses.now) / 1000) }
            : null;
        return {
          id: bot.id,
          mode: bot.mode,
          polling: false,
          healthy: true,
          outbound: {
            pacing: bot.outbound?.enabled === false ? 'off' : pauses.mode,
            pause,
            paused_chats: pauses.chats.length,
          },
        };
      }),
    );
  }

  async refreshGauges(): Promise<void> {
    this.metrics.outboundPacingDegraded.set(this.pacer.mode === 'degraded' ? 1 : 0);
    await Promise.all(
      this.config.config.bots.map(async (bot) => {
        const pauses = await this.pacer.pauses(bot.id);
        this.metrics.outboundPauses.set(
          { bot: bot.id, scope: 'bot' },
          pauses.botUntil === undefined ? 0 : 1,
        );
        this.metrics.outboundPauses.set({ bot: bot.id, scope: 'chat' }, pauses.chats.length);
      }),
    );
  }
}
