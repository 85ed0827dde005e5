import { Injectable } from '@nestjs/common';

/** One bot's state as a feature sees it (ingress: poller or webhook; gateway: getMe). */
export interface BotHealth {
  id: string;
  mode: 'polling' | 'webhook';
  polling: boolean;
  healthy: boolean;
  /** Why it is unhealthy, for operators (never a secret). */
  problem?: string;
  webhook?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface ReadinessResult {
  ready: boolean;
  detail?: Record<string, unknown>;
}

export type ReadinessCheck = () => Promise<ReadinessResult> | ReadinessResult;
export type BotHealthSource = () => Promise<BotHealth[]> | BotHealth[];

/**
 * Features register what readiness and /healthz should know about them, so the
 * observability lib reports on ingress, dispatcher and gateway without importing them.
 */
@Injectable()
export class HealthRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly botSources = new Map<string, BotHealthSource>();

  addReadinessCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  addBotHealthSource(name: string, source: BotHealthSource): void {
    this.botSources.set(name, source);
  }

  readinessChecks(): ReadonlyMap<string, ReadinessCheck> {
    return this.checks;
  }

  /** Bot states from every source, merged by bot id (unhealthy wins). */
  async bots(): Promise<BotHealth[]> {
    const merged = new Map<string, BotHealth>();
    for (const source of this.botSources.values()) {
      for (const bot of await source()) {
        const known = merged.get(bot.id);
        if (!known) merged.set(bot.id, { ...bot });
        else
          merged.set(bot.id, {
            ...known,
            ...bot,
            healthy: known.healthy && bot.healthy,
            problem: known.problem ?? bot.problem,
          });
      }
    }
    return [...merged.values()];
  }
}
