import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { OUTBOX_ROUTE } from '@relaygram/contracts';
import { QUEUE_CONTEXT, readRouteStats, type QueueContext } from '@relaygram/queue';
import { BotStatusReader } from '../health/bot-status-reader';
import { RelaygramMetrics } from './relaygram-metrics';

/**
 * Fills the queue depth, lane and dead-letter gauges of every configured route, the
 * pending and stale gauges of every pull route, and the health gauge of every bot, from
 * Redis at each scrape. The values are shared by all
 * replicas, so every app's /metrics shows the same numbers: aggregate them with max,
 * not sum. Routes and bots no longer configured disappear from the gauges.
 */
@Injectable()
export class QueueGaugeRefresher implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly metrics: RelaygramMetrics,
    private readonly config: ConfigService,
    private readonly bots: BotStatusReader,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
  ) {}

  onApplicationBootstrap(): void {
    this.metrics.addScrapeHook(this, () => this.refresh());
  }

  onModuleDestroy(): void {
    this.metrics.removeScrapeHook(this);
  }

  async refresh(): Promise<void> {
    // The outbox's internal route too: its depth is the sends waiting to go out.
    const routes = [...this.config.config.routes.map((r) => r.name), OUTBOX_ROUTE];
    const [stats, bots] = await Promise.all([
      Promise.all(routes.map((route) => readRouteStats(this.ctx, route))),
      this.bots.read({ redis: true }),
    ]);
    const { queueDepth, lanes, deadLetters, botHealthy, pullPending, pullStale } = this.metrics;
    for (const gauge of [queueDepth, lanes, deadLetters, botHealthy, pullPending, pullStale])
      gauge.reset();
    routes.forEach((route, i) => {
      queueDepth.labels(route).set(stats[i].queued);
      lanes.labels(route).set(stats[i].lanes);
      deadLetters.labels(route).set(stats[i].dead);
    });
    for (const bot of bots) botHealthy.labels(bot.id).set(bot.healthy ? 1 : 0);
    // A pull route of several bots: its pending summed, stale when any of its lanes is.
    const pending = new Map<string, number>();
    const stale = new Map<string, number>();
    for (const view of bots.flatMap((bot) => bot.pull_routes ?? [])) {
      if (view.pending === null) continue;
      pending.set(view.route, (pending.get(view.route) ?? 0) + view.pending);
      stale.set(view.route, Math.max(stale.get(view.route) ?? 0, view.stale ? 1 : 0));
    }
    for (const [route, n] of pending) pullPending.labels(route).set(n);
    for (const [route, n] of stale) pullStale.labels(route).set(n);
  }
}
