import type { OutboundConfig } from '@relaygram/config';

/** The window of `per_group_per_minute`. */
export const GROUP_WINDOW_MS = 60_000;

/** The bot's calendar keeps bins about this wide (exactly 1/per_second when that is longer). */
export const TARGET_BIN_MS = 100;

/**
 * How late a send may reach Telegram after its slot (the trip there, a busy event loop)
 * without breaking a limit on Telegram's clock: each chat's and group's budget is
 * charged as if its sends landed this much after their slots. With a chat burst of 2
 * or more this costs nothing while a chat is busy, only the first send after a pause
 * starts its refill this much later.
 */
export const DEFAULT_TRANSIT_MS = 100;

/** A bot's outbound config as the budget arithmetic uses it. */
export interface BudgetParams {
  readonly maxWaitMs: number;
  readonly transitMs: number;
  /** Time between two sends to one chat once its burst is used (1 / per_chat_per_second). */
  readonly chatIntervalMs: number;
  readonly chatBurst: number;
  readonly groupLimit: number;
  readonly groupWindowMs: number;
  /** The bot's calendar: bins of this width, holding `binCapacity` sends each. */
  readonly binWidthMs: number;
  readonly binCapacity: number;
  /** Bins the Redis ring keeps: enough for every bin from now to now + max_wait. */
  readonly ringSize: number;
}

export function budgetParams(
  outbound: OutboundConfig,
  transitMs: number = DEFAULT_TRANSIT_MS,
): BudgetParams {
  // Whole sends per bin: per_second 30 gives 3 per 100 ms, per_second 2 one per 500 ms.
  const binCapacity = Math.max(1, Math.ceil((outbound.perSecond * TARGET_BIN_MS) / 1000));
  const binWidthMs = (binCapacity * 1000) / outbound.perSecond;
  return Object.freeze({
    maxWaitMs: outbound.maxWaitMs,
    transitMs,
    chatIntervalMs: 1000 / outbound.perChatPerSecond,
    chatBurst: outbound.chatBurst,
    groupLimit: outbound.perGroupPerMinute,
    groupWindowMs: GROUP_WINDOW_MS,
    binWidthMs,
    binCapacity,
    ringSize: Math.ceil(outbound.maxWaitMs / binWidthMs) + 3,
  });
}
