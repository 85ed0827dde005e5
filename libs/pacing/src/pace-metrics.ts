import type { BotConfig } from '@relaygram/config';
import type { RelaygramMetrics } from '@relaygram/observability';
import type { CallPlan } from './budget/call-plan';
import type { OutboundPacer, PaceResult } from './outbound-pacer';

/**
 * How a paced call is counted, the same for the gateway and the dispatcher's webhook
 * replies: the wait by the budget it waited for, or the refusal.
 */
export function countPace(metrics: RelaygramMetrics, botId: string, result: PaceResult): void {
  if (result.kind === 'go') {
    metrics.outboundWait.observe({ bot: botId, budget: result.budget }, result.waitedMs / 1000);
  } else if (result.kind === 'refused') {
    metrics.outboundPaced.inc({ bot: botId, budget: result.budget });
  }
}

/**
 * A Telegram 429 on a paced call: pauses what it hit for every process (the pacer
 * decides the scope, see budget/pause-scope.ts), and counts it by that scope.
 */
export async function reportTelegram429(
  pacer: OutboundPacer,
  metrics: RelaygramMetrics,
  bot: BotConfig,
  plan: CallPlan,
  retryAfter: number | undefined,
): Promise<void> {
  const report = await pacer.reportTooManyRequests(bot, plan, retryAfter ?? 1);
  metrics.telegram429.inc({ bot: bot.id, scope: report.scope });
}
