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
  /**
   * The bot's calendar: bins of this width, holding `binCapacity` sends each. A
   * capacity of 0 (broadcasts with a share of 0) leaves no bin with room.
   */
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

/**
 * The same budgets for one send of a broadcast: it takes a slot only in a bin of the
 * bot's calendar that its cost leaves within `share` of the bin's capacity, so every bin
 * keeps the rest for interactive calls however long a broadcast runs. Bin width and ring
 * are the bot's own: broadcasts and interactive calls count in one calendar.
 *
 * Whole sends per bin, rounded down, but at least one while the share is above 0: else
 * a small bin (one send, at per_second 10 or less) or a small share (below 1/3 at 30 per
 * second) would silently stop every broadcast. Such a bot keeps less room for
 * interactive calls than its share says, none in bins of one send. A share of 0 gives
 * broadcasts no room: every one is refused.
 */
export function broadcastParams(base: BudgetParams, share: number): BudgetParams {
  return Object.freeze({ ...base, binCapacity: broadcastCapacity(base.binCapacity, share) });
}

function broadcastCapacity(binCapacity: number, share: number): number {
  if (!(share > 0)) return 0;
  // A product such as 100 x 0.29 lands a hair below its whole number.
  const sends = Math.floor(binCapacity * share + 1e-9);
  return Math.min(binCapacity, Math.max(1, sends));
}
