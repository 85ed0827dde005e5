import type { RelaygramMetrics } from '@relaygram/observability';
import type { PaceResult } from './outbound-pacer';

type WaitChild = ReturnType<RelaygramMetrics['outboundWait']['labels']>;

/** Children of the wait histogram by bot, then budget: every paced call observes one. */
const waitChildren = new WeakMap<RelaygramMetrics, Map<string, Map<string, WaitChild>>>();

/**
 * How a paced call is counted, the same for the gateway and the dispatcher's webhook
 * replies: the wait by the budget it waited for, or the refusal. The histogram's child
 * of a bot and budget is kept, so a call does not hash a fresh label object.
 */
export function countPace(metrics: RelaygramMetrics, botId: string, result: PaceResult): void {
  if (result.kind === 'go') {
    waitChild(metrics, botId, result.budget).observe(result.waitedMs / 1000);
  } else if (result.kind === 'refused') {
    metrics.outboundPaced.inc({ bot: botId, budget: result.budget });
  }
}

function waitChild(metrics: RelaygramMetrics, botId: string, budget: string): WaitChild {
  let bots = waitChildren.get(metrics);
  if (!bots) waitChildren.set(metrics, (bots = new Map()));
  let budgets = bots.get(botId);
  if (!budgets) bots.set(botId, (budgets = new Map()));
  let child = budgets.get(budget);
  if (!child) {
    child = metrics.outboundWait.labels({ bot: botId, budget });
    budgets.set(budget, child);
  }
  return child;
}
