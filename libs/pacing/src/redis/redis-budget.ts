import type { OutboundKeys } from '@relaygram/contracts';
import type { RedisClient } from '@relaygram/queue';
import type { BudgetKind } from '../budget/budget-math';
import type { BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { BOT_WIDE_CHATS, BOT_WIDE_WINDOW_MS, type PauseScope } from '../budget/pause-scope';
import { ACQUIRE_LUA, PAUSED_FOR_LUA, PAUSES_LUA, PAUSE_LUA } from './pacing.lua';
import { ScriptBatcher } from './script-batcher';

type ScriptFn = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

interface PacingScripts {
  rgOutboundAcquire: ScriptFn;
  rgOutboundPause: ScriptFn;
  rgOutboundPausedFor: ScriptFn;
  rgOutboundPauses: ScriptFn;
}

const SCRIPTS: Record<keyof PacingScripts, string> = {
  rgOutboundAcquire: ACQUIRE_LUA,
  rgOutboundPause: PAUSE_LUA,
  rgOutboundPausedFor: PAUSED_FOR_LUA,
  rgOutboundPauses: PAUSES_LUA,
};

/** What one reservation in Redis answered: a wait from now, or a refusal. */
export type SharedDecision =
  | { ok: true; waitMs: number; binding?: BudgetKind }
  | { ok: false; retryInMs: number; binding: BudgetKind };

export interface SharedPauses {
  /** Redis's clock when read (ms). */
  now: number;
  botUntil?: number;
  chats: { chat: string; until: number }[];
}

/** The chats of a bot a pause listing returns at most. */
const MAX_LISTED_PAUSES = 1000;

/**
 * The budgets in Redis: one script per call (ACQUIRE_LUA), atomic across every
 * replica. `now` is for tests only: production calls let Redis read its own clock.
 */
export class RedisBudget {
  readonly #redis: RedisClient & PacingScripts;
  readonly #acquire: ScriptBatcher;

  /** `staleMs`: a reservation still queued this long after it was asked for is dropped. */
  constructor(
    redis: RedisClient,
    private readonly keys: OutboundKeys,
    staleMs = 1_000,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
    this.#redis = redis as RedisClient & PacingScripts;
    this.#acquire = new ScriptBatcher(redis, 'rgOutboundAcquire', staleMs);
  }

  async reserve(
    botId: string,
    plan: CallPlan,
    p: BudgetParams,
    now?: number,
  ): Promise<SharedDecision> {
    const chat = plan.chat;
    const group = chat?.kind === 'group';
    const answer = (await this.#acquire.call([
      4,
      this.keys.pauses(botId),
      this.keys.bins(botId),
      this.keys.chat(botId, chat?.key ?? '-'),
      this.keys.group(botId, chat?.key ?? '-'),
      plan.cost,
      p.maxWaitMs,
      p.transitMs,
      chat ? p.chatIntervalMs : 0,
      p.chatBurst,
      group ? p.groupLimit : 0,
      p.groupWindowMs,
      p.binWidthMs,
      p.binCapacity,
      p.ringSize,
      chat?.key ?? '',
      now ?? '',
    ])) as [number, number, string];
    const [ok, ms, binding] = answer;
    if (ok === 1) {
      return binding
        ? { ok: true, waitMs: ms, binding: binding as BudgetKind }
        : { ok: true, waitMs: ms };
    }
    return { ok: false, retryInMs: ms, binding: binding as BudgetKind };
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
