import { Feature } from '@relaygram/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService, pullRoutesOf, type BotConfig } from '@relaygram/config';
import {
  PullStore,
  QUEUE_CONTEXT,
  readBotStats,
  type BotStats,
  type PullLaneStatus,
  type QueueContext,
} from '@relaygram/queue';
import { displayUrl } from '../logging/logger';
import { withTimeout } from '../timeout';
import { HealthRegistry, mergeBotHealth, type BotHealth } from './health-registry';
import { pullRouteView, stalePullProblem, type PullRouteView } from './pull-route-view';
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
  /** Bots with pull routes: each route's pending count, last poll and staleness. */
  pull_routes?: PullRouteView[];
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
 * recent error with updates pending) is unhealthy whoever reported it, and so is a bot
 * with a stale pull route (its client gone while updates wait): degraded, not down.
 */
@Injectable()
export class BotStatusReader {
  private readonly pull: PullStore;

  constructor(
    private readonly registry: HealthRegistry,
    private readonly config: ConfigService,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
  ) {
    this.pull = new PullStore(ctx);
  }

  async read(options: { redis: boolean }): Promise<BotStatus[]> {
    const bots = this.config.config.bots;
    const reported = new Map<string, BotHealth>();
    const add = (report: BotHealth) => {
      const known = reported.get(report.id);
      reported.set(report.id, known ? mergeBotHealth(known, report) : report);
    };
    const [own, shared, stats, pulls] = await Promise.all([
      this.registry.bots(),
      options.redis && !this.registry.hasBotHealthSource(Feature.Ingress)
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
      options.redis ? this.readPullLanes() : Promise.resolve([] as PullLaneStatus[]),
    ]);
    shared.forEach(add);
    own.forEach(add);
    const now = Date.now();
    return bots.map((bot) => {
      const status = this.status(bot, reported.get(bot.id), stats.get(bot.id));
      this.addPullRoutes(status, pulls, now);
      return status;
    });
  }

  private readPullLanes(): Promise<PullLaneStatus[]> {
    const routes = pullRoutesOf(this.config.config);
    if (!routes.length) return Promise.resolve([]);
    return withTimeout(this.pull.status(routes), REDIS_READ_TIMEOUT_MS).catch(
      () => [] as PullLaneStatus[],
    );
  }

  private addPullRoutes(status: BotStatus, lanes: readonly PullLaneStatus[], now: number): void {
    const routes = pullRoutesOf(this.config.config).filter((r) => r.bots.includes(status.id));
    if (!routes.length) return;
    const views = routes.map((route) =>
      pullRouteView(
        route,
        lanes.find((lane) => lane.route === route.name && lane.bot === status.id),
        now,
      ),
    );
    status.pull_routes = views;
    const problems = views.filter((view) => view.stale).map(stalePullProblem);
    if (!problems.length) return;
    status.healthy = false;
    status.problem = [status.problem, ...problems].filter(Boolean).join('; ');
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
