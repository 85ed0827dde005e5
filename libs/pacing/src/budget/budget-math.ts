import type { BudgetParams } from './budget-params';

/** The budget that decided when a call may go: its wait is counted under this name. */
export type BudgetKind = 'bot' | 'chat' | 'group' | 'pause';

/** One chat's GCRA state: theoretical arrival time and the last slot given (ms). */
export interface ChatState {
  readonly tat: number;
  readonly last: number;
}

export const EMPTY_CHAT: ChatState = Object.freeze({ tat: 0, last: 0 });

/** What one decision reads: the clock, the pauses and the budgets of the call's bot and chat. */
export interface BudgetView {
  readonly now: number;
  readonly botPauseUntil?: number;
  readonly chatPauseUntil?: number;
  /** Present when the call names a chat. */
  readonly chat?: ChatState;
  /** Present for groups and channels: their latest slots, newest first. */
  readonly groupLog?: readonly number[];
  /** Sends already given a slot in bin `bin` of the bot's calendar. */
  binCount(bin: number): number;
}

export type SlotDecision =
  | {
      readonly ok: true;
      readonly slot: number;
      readonly bin: number;
      /** The budget the call waits for; undefined when it may go now. */
      readonly binding?: BudgetKind;
    }
  | { readonly ok: false; readonly retryAt: number; readonly binding: BudgetKind };

/**
 * GCRA, one chat: a bucket of `chatBurst` sends refilled every `chatIntervalMs`. A call
 * of `cost` sends fits once the theoretical arrival time, less the bucket, is past; it
 * never goes before the chat's previous slot, so one chat's sends keep their order
 * across replicas. An album larger than the bucket is charged the whole bucket.
 */
export function chatAllowAt(state: ChatState, cost: number, p: BudgetParams): number {
  const charged = Math.min(cost, p.chatBurst);
  return Math.max(state.last, state.tat + (charged - p.chatBurst) * p.chatIntervalMs);
}

/** The chat after a slot: charged from the slot plus the transit allowance. */
export function chatAfter(
  state: ChatState,
  slot: number,
  cost: number,
  p: BudgetParams,
): ChatState {
  const charged = Math.min(cost, p.chatBurst);
  return {
    tat: Math.max(state.tat, slot + p.transitMs) + charged * p.chatIntervalMs,
    last: Math.max(state.last, slot),
  };
}

/**
 * Sliding window, one group: at most `groupLimit` sends in any `groupWindowMs`. The
 * log holds the latest slots newest first; a call of n sends fits `window + transit`
 * after the slot n places short of the limit.
 */
export function groupAllowAt(log: readonly number[], cost: number, p: BudgetParams): number {
  const charged = Math.min(cost, p.groupLimit);
  const oldest = log[p.groupLimit - charged];
  return oldest === undefined ? Number.NEGATIVE_INFINITY : oldest + p.groupWindowMs + p.transitMs;
}

export function groupAfter(
  log: readonly number[],
  slot: number,
  cost: number,
  p: BudgetParams,
): number[] {
  const charged = Math.min(cost, p.groupLimit);
  return [...new Array<number>(charged).fill(slot), ...log].slice(0, p.groupLimit);
}

/** The bin of the bot's calendar a time falls in. */
export function binOf(time: number, p: BudgetParams): number {
  return Math.floor(time / p.binWidthMs);
}

/**
 * The earliest slot for a call of `cost` sends: after every pause, when its chat and
 * group budgets allow it, in the first bin of the bot's calendar with room from then
 * on. A bin with room is one holding fewer than `binCapacity` sends (an empty bin takes
 * any album, unless the capacity is 0: then none has room). A call whose slot would be
 * more than `maxWaitMs` away is refused, with the time it could have gone.
 *
 * The bot budget is a calendar rather than a second GCRA so that a call waiting for a
 * busy chat takes the bot's capacity of its own moment only: calls to other chats still
 * go at once.
 */
export function findSlot(view: BudgetView, cost: number, p: BudgetParams): SlotDecision {
  let earliest = view.now;
  let binding: BudgetKind | undefined;
  const raise = (time: number | undefined, kind: BudgetKind) => {
    if (time !== undefined && time > earliest) {
      earliest = time;
      binding = kind;
    }
  };
  raise(view.botPauseUntil, 'pause');
  raise(view.chatPauseUntil, 'pause');
  if (view.chat) raise(chatAllowAt(view.chat, cost, p), 'chat');
  if (view.groupLog) raise(groupAllowAt(view.groupLog, cost, p), 'group');
  const horizon = view.now + p.maxWaitMs;
  if (earliest > horizon) return { ok: false, retryAt: earliest, binding: binding ?? 'bot' };
  // No bin ever has room (a broadcast share of 0): refused as if every bin to the horizon
  // were full, without reading them all.
  if (p.binCapacity < 1) {
    const afterHorizon = Math.floor(horizon / p.binWidthMs) + 1;
    return { ok: false, retryAt: afterHorizon * p.binWidthMs, binding: 'bot' };
  }
  for (let bin = binOf(earliest, p); ; bin++) {
    const start = bin * p.binWidthMs;
    if (start > horizon) return { ok: false, retryAt: start, binding: 'bot' };
    const count = view.binCount(bin);
    if (count === 0 || count + cost <= p.binCapacity) {
      if (start > earliest) return { ok: true, slot: start, bin, binding: 'bot' };
      return { ok: true, slot: earliest, bin, binding };
    }
  }
}

/** Telegram's `retry_after`: whole seconds, at least 1, until the time given. */
export function retryAfterSeconds(retryAt: number, now: number): number {
  return Math.max(1, Math.ceil((retryAt - now) / 1000));
}
