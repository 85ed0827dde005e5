import type { OutboundKeys } from '@relaygram/contracts';
import type { RedisClient } from '@relaygram/queue';
import type { BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { BOT_WIDE_CHATS, BOT_WIDE_WINDOW_MS, type PauseScope } from '../budget/pause-scope';
import { ACQUIRE_LUA, PAUSED_FOR_LUA, PAUSES_LUA, PAUSE_LUA } from './pacing.lua';
import { ReservationBatches, type SharedDecision } from './reservation-batch';
import { ReservationBatcher } from './reservation-batcher';

export type { SharedDecision } from './reservation-batch';

type ScriptFn = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

interface PacingScripts {
  rgOutboundAcquireBatch: ScriptFn;
  rgOutboundPause: ScriptFn;
  rgOutboundPausedFor: ScriptFn;
  rgOutboundPauses: ScriptFn;
}

const SCRIPTS: Record<keyof PacingScripts, string> = {
  rgOutboundAcquireBatch: ACQUIRE_LUA,
  rgOutboundPause: PAUSE_LUA,
  rgOutboundPausedFor: PAUSED_FOR_LUA,
  rgOutboundPauses: PAUSES_LUA,
};

export interface SharedPauses {
  /** Redis's clock when read (ms). */
  now: number;
  botUntil?: number;
  chats: { chat: string; until: number }[];
}

/** The chats of a bot a pause listing returns at most. */
const MAX_LISTED_PAUSES = 1000;

/**
 * The budgets in Redis, atomic across every replica: reservations go by batches, one
 * script call each (ACQUIRE_LUA, see ReservationBatcher). `now` is for tests only:
 * production calls let Redis read its own clock.
 */
export class RedisBudget {
  readonly #redis: RedisClient & PacingScripts;
  readonly #acquire: ReservationBatcher;

  /**
   * `timeoutMs`: a reservation unanswered this long after it was asked fails with a
   * TimeoutError, and one still queued by then is dropped, never sent.
   */
  constructor(
    redis: RedisClient,
    private readonly keys: OutboundKeys,
    timeoutMs = 1_000,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
    this.#redis = redis as RedisClient & PacingScripts;
    this.#acquire = new ReservationBatcher(
      redis,
      'rgOutboundAcquireBatch',
      new ReservationBatches(keys),
      timeoutMs,
    );
  }

  reserve(botId: string, plan: CallPlan, p: BudgetParams, now?: number): Promise<SharedDecision> {
    return this.#acquire.reserve(botId, plan, p, now);
  }

  async pause(
    botId: string,
    chat: string | undefined,
    retryAfterMs: number,
    now?: number,
  ): Promise<{ scope: PauseScope; pauseMs: number }> {
    const [scope, pauseMs] = (await this.#redis.rgOutboundPause(
      2,
      this.keys.pauses(botId),
      this.keys.recent429(botId),
      chat ?? '',
      retryAfterMs,
      BOT_WIDE_WINDOW_MS,
      BOT_WIDE_CHATS,
      now ?? '',
    )) as [PauseScope, number];
    return { scope, pauseMs };
  }

  /** How long a pause on the bot or this chat still lasts; 0 when none. */
  async pausedFor(botId: string, chat: string | undefined, now?: number): Promise<number> {
    return Number(
      await this.#redis.rgOutboundPausedFor(1, this.keys.pauses(botId), chat ?? '', now ?? ''),
    );
  }

  async pauses(botId: string): Promise<SharedPauses> {
    const [now, ...pairs] = (await this.#redis.rgOutboundPauses(
      1,
      this.keys.pauses(botId),
      MAX_LISTED_PAUSES,
    )) as string[];
    const view: SharedPauses = { now: Number(now), chats: [] };
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const member = pairs[i] as string;
      const until = Number(pairs[i + 1]);
      if (member === '*') view.botUntil = until;
      else view.chats.push({ chat: member, until });
    }
    return view;
  }
}
