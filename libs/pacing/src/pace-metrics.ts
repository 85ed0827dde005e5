import type { RelaygramMetrics } from '@relaygram/observability';
import type { PaceResult } from './outbound-pacer';

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
