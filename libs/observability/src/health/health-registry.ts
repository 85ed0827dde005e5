import { Injectable } from '@nestjs/common';
import { withTimeout } from '../timeout';

/** One bot's state as a feature sees it (ingress: poller or webhook; gateway: getMe). */
export interface BotHealth {
  id: string;
  mode: 'polling' | 'webhook';
  polling: boolean;
  healthy: boolean;
  /** Why it is unhealthy, for operators (never a secret). */
  problem?: string;
  /**
   * Telegram's getWebhookInfo answer as last read (`url`, `pending_update_count`,
   * `last_error_date`, `last_error_message`...), for webhook bots.
   */
  webhook?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface ReadinessResult {
  ready: boolean;
  detail?: Record<string, unknown>;
}

export type ReadinessCheck = () => Promise<ReadinessResult> | ReadinessResult;

export interface LivenessResult {
  alive: boolean;
  detail?: Record<string, unknown>;
}

/**
 * What only a restart mends, from what the process already knows: a liveness check
 * reads no external system, so a Redis outage never restarts every replica at once.
 */
export type LivenessCheck = () => LivenessResult;
export type BotHealthSource = () => Promise<BotHealth[]> | BotHealth[];
/** Extra top-level fields of /healthz (the gateway's client count...). */
export type HealthSummarySource = () => Promise<Record<string, unknown>> | Record<string, unknown>;

/** A source or check that does not answer within this is skipped (or reported down). */
export const HEALTH_SOURCE_TIMEOUT_MS = 2000;

/**
 * Two reports on one bot: unhealthy wins, polling if any says so, problems joined,
 * the webhook info of whichever has it.
 */
export function mergeBotHealth(known: BotHealth, next: BotHealth): BotHealth {
  const problems = [known.problem, next.problem].filter(
    (p, i, all): p is string => typeof p === 'string' && p !== '' && all.indexOf(p) === i,
  );
  const merged: BotHealth = {
    ...known,
    ...next,
    polling: known.polling || next.polling,
    healthy: known.healthy && next.healthy,
  };
  if (problems.length) merged.problem = problems.join('; ');
  else delete merged.problem;
  const webhook = next.webhook ?? known.webhook;
  if (webhook) merged.webhook = webhook;
  return merged;
}

/**
 * Features register what readiness and /healthz should know about them, so the
 * observability lib reports on ingress, dispatcher and gateway without importing them.
 */
@Injectable()
export class HealthRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly livenessChecks = new Map<string, LivenessCheck>();
  private readonly botSources = new Map<string, BotHealthSource>();
  private readonly summaries = new Map<string, HealthSummarySource>();

  addReadinessCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  addLivenessCheck(name: string, check: LivenessCheck): void {
    this.livenessChecks.set(name, check);
  }

  liveness(): ReadonlyMap<string, LivenessCheck> {
    return this.livenessChecks;
  }

  /** `name` is the feature: `ingress` (pollers, webhooks) or `gateway` (getMe). */
  addBotHealthSource(name: string, source: BotHealthSource): void {
    this.botSources.set(name, source);
  }

  removeBotHealthSource(name: string): void {
    this.botSources.delete(name);
  }

  hasBotHealthSource(name: string): boolean {
    return this.botSources.has(name);
  }

  addSummarySource(name: string, source: HealthSummarySource): void {
    this.summaries.set(name, source);
  }

  readinessChecks(): ReadonlyMap<string, ReadinessCheck> {
    return this.checks;
  }

  /**
   * Bot states from every source, merged by bot id (see mergeBotHealth). A source that
   * throws or does not answer within HEALTH_SOURCE_TIMEOUT_MS is left out.
   */
  async bots(): Promise<BotHealth[]> {
    const reports = await Promise.all(
      [...this.botSources.values()].map((source) =>
        withTimeout(Promise.resolve().then(source), HEALTH_SOURCE_TIMEOUT_MS).catch(
          () => undefined,
        ),
      ),
    );
    const merged = new Map<string, BotHealth>();
    for (const report of reports) {
      for (const bot of report ?? []) {
        const known = merged.get(bot.id);
        merged.set(bot.id, known ? mergeBotHealth(known, bot) : { ...bot });
      }
    }
    return [...merged.values()];
  }

  /** The features' extra /healthz fields, merged; a failing source is left out. */
  async summary(): Promise<Record<string, unknown>> {
    const parts = await Promise.all(
      [...this.summaries.values()].map((source) =>
        withTimeout(Promise.resolve().then(source), HEALTH_SOURCE_TIMEOUT_MS).catch(
          () => undefined,
        ),
      ),
    );
    return Object.assign({}, ...parts.filter(Boolean)) as Record<string, unknown>;
  }
}
