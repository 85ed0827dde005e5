import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Feature, errorMessage } from '@relaygram/contracts';
import { HealthRegistry, RelaygramMetrics, type BotHealth } from '@relaygram/observability';
import { IngressBots } from '../bots/ingress-bots';
import { PollingAdapter } from '../polling/polling-adapter';
import { IngressStore } from '../state/ingress-store';
import { ReplicaAcknowledger } from '../state/replica-acknowledger';
import { pollingBotHealth, webhookBotHealth, type StoredBotState } from './bot-health-assessment';

/**
 * Ingress's part of /healthz: every configured bot with its mode, whether it is polled
 * and whether it is healthy, with the problem when it is not. It reads the state the
 * poller's lease holder and the webhook watcher stored in Redis, so every replica
 * reports the same, whichever one polls or watches.
 */
@Injectable()
export class IngressBotHealth implements OnModuleInit {
  constructor(
    private readonly registry: HealthRegistry,
    private readonly bots: IngressBots,
    private readonly polling: PollingAdapter,
    private readonly store: IngressStore,
    private readonly metrics: RelaygramMetrics,
    private readonly replicas: ReplicaAcknowledger,
  ) {}

  onModuleInit(): void {
    this.registry.addBotHealthSource(Feature.Ingress, () => this.report());
    this.registry.addSummarySource('replicas', () => this.replicaSummary());
    // A standby replica is as ready as the polling one: readiness only lists who polls here.
    this.registry.addReadinessCheck('pollers', () => ({
      ready: true,
      detail: {
        polling_here: this.polling
          .local()
          .filter((p) => p.polling)
          .map((p) => p.bot),
      },
    }));
  }

  /**
   * With `redis.wait_replicas`: whether replicas confirm what this replica accepts. While
   * they do not, its webhooks answer 503 and its poller does not confirm batches.
   */
  replicaSummary(): Record<string, unknown> {
    if (!this.replicas.enabled) return {};
    const state = this.replicas.state();
    return {
      replicas: {
        wait_replicas: state.replicas,
        confirming: state.confirming,
        ...(state.failingSince === undefined
          ? {}
          : { failing_since: new Date(state.failingSince).toISOString(), problem: state.problem }),
      },
    };
  }

  async report(): Promise<BotHealth[]> {
    const bots = [...this.bots.current.byId.values()].map((b) => b.config);
    if (bots.length === 0) return [];
    const { redis, keys } = this.store;
    const pipeline = redis.pipeline();
    for (const bot of bots) {
      pipeline.hgetall(keys.botState(bot.id));
      pipeline.exists(keys.pollerLease(bot.id));
    }
    let replies: [Error | null, unknown][];
    try {
      replies = (await pipeline.exec()) ?? [];
    } catch (error) {
      const problem = `bot state unreadable: Redis: ${errorMessage(error)}`;
      return bots.map((bot) => ({
        id: bot.id,
        mode: bot.mode,
        polling: false,
        healthy: false,
        problem,
      }));
    }
    const now = Date.now();
    return bots.map((bot, i) => {
      const stored = (replies[i * 2]?.[1] ?? {}) as StoredBotState;
      const leaseHeld = Number(replies[i * 2 + 1]?.[1]) === 1;
      const health =
        bot.mode === 'polling'
          ? pollingBotHealth(bot, stored, leaseHeld)
          : webhookBotHealth(bot, stored, now);
      this.metrics.botHealthy.labels(bot.id).set(health.healthy ? 1 : 0);
      return health;
    });
  }
}
