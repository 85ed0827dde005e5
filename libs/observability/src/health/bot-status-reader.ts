import { Inject, Injectable } from '@nestjs/common';
import { ConfigService, type BotConfig } from '@relaygram/config';
import { QUEUE_CONTEXT, readBotStats, type BotStats, type QueueContext } from '@relaygram/queue';
import { displayUrl } from '../logging/logger';
import { withTimeout } from '../timeout';
import { HealthRegistry, mergeBotHealth, type BotHealth } from './health-registry';
import { readSharedBotStates } from './shared-bot-state';
import { webhookProblem } from './webhook-drift';

/** One bot in /healthz, the admin API and the bot health gauge. */
export interface BotStatus {
  id: string;
  mode: 'polling' | 'webhook';
  polling: boolean;
  healthy: boolean;
  /** Deliveries of its updates waiting; null when Redis does not answer. */
  queue: number | null;
  /** Dead letters held; null when Redis does not answer. */
  dead: number | null;
  /** `unknown` when no feature reported on the bot. */
  state?: string;
  problem?: string;
  /** Webhook bots: `expected_url` (the config) and Telegram's getWebhookInfo as last read. */
  webhook?: Record<string, unknown>;
  [extra: string]: unknown;
}

const REDIS_READ_TIMEOUT_MS = 1000;
const CORE_FIELDS = new Set(['id', 'mode', 'polling', 'healthy', 'queue', 'dead']);

/**
 * Every configured bot with what is known of it: the reports of this process's
 * features (ingress, gateway), ingress's state in Redis when this process runs no
 * ingress, and the bot's queue and dead-letter counts.
 *
 * A bot nobody reported on is listed healthy with `state: "unknown"`: a dispatcher
 * alone cannot see pollers, and listing every bot as degraded there would page
 * operators for nothing. A webhook whose getWebhookInfo shows drift (another URL, a
 * recent error with updates pending) is unhealthy whoever reported it.
 */
@Injectable()
export class BotStatusReader {
  constructor(
    private readonly registry: HealthRegistry,
    private readonly config: ConfigService,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
  ) {}

  async read(options: { redis: boolean }): Promise<BotStatus[]> {
    const bots = this.config.config.bots;
    const reported = new Map<string, BotHealth>();
    const add = (report: BotHealth) => {
      const known = reported.get(report.id);
      reported.set(report.id, known ? mergeBotHealth(known, report) : report);
    };
    const [own, shared, stats] = await Promise.all([
      this.registry.bots(),
      options.redis && !this.registry.hasBotHealthSource('ingress')
        ? withTimeout(
            readSharedBotStates(
              this.ctx,
              bots.map((bot) => ({
                id: bot.id,
                mode: bot.mode,
                webhookUrl: bot.webhook?.manage ? bot.webhook.url : undefined,
              })),
            ),
            REDIS_READ_TIMEOUT_MS,
          ).catch(() => [] as BotHealth[])
        : Promise.resolve([] as BotHealth[]),
      options.redis ? this.readStats(bots) : Promise.resolve(new Map<string, BotStats>()),
    ]);
    shared.forEach(add);
    own.forEach(add);
    return bots.map((bot) => this.status(bot, reported.get(bot.id), stats.get(bot.id)));
  }

  private async readStats(bots: readonly BotConfig[]): Promise<Map<string, BotStats>> {
    const entries = await Promise.all(
      bots.map((bot) =>
        withTimeout(readBotStats(this.ctx, bot.id), REDIS_READ_TIMEOUT_MS).then(
          (stats) => [bot.id, stats] as const,
          () => undefined,
        ),
      ),
    );
    return new Map(entries.filter((e) => e !== undefined));
  }

  private status(
    bot: BotConfig,
    report: BotHealth | undefined,
    stats: BotStats | undefined,
  ): BotStatus {
    const status: BotStatus = {
      id: bot.id,
      mode: bot.mode,
      polling: report?.polling ?? false,
      healthy: report?.healthy ?? true,
      queue: stats?.queued ?? null,
      dead: stats?.dead ?? null,
    };
    if (!report) status.state = 'unknown';
    const problems: string[] = [];
    if (report?.problem) problems.push(report.problem);
    if (bot.mode === 'webhook' && bot.webhook) {
      const info = report?.webhook;
      status.webhook = { expected_url: displayUrl(bot.webhook.url), ...info };
      // A reporter that already found the bot unhealthy has said why.
      const drift = info && status.healthy ? webhookProblem(info, bot.webhook.url) : undefined;
      if (drift) {
        status.healthy = false;
        problems.push(drift);
      }
    }
    for (const [key, value] of Object.entries(report ?? {})) {
      if (!CORE_FIELDS.has(key) && key !== 'problem' && key !== 'webhook' && value !== undefined)
        status[key] = value;
    }
    if (problems.length) status.problem = problems.join('; ');
    return status;
  }
}
