import type { OutboundKeys } from '@relaygram/contracts';
import type { BudgetKind } from '../budget/budget-math';
import type { BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';

/** What one reservation in Redis answered: a wait from now, or a refusal. */
export type SharedDecision =
  | { readonly ok: true; readonly waitMs: number; readonly binding?: BudgetKind }
  | { readonly ok: false; readonly retryInMs: number; readonly binding: BudgetKind };

/** One reservation as the batch script takes it. */
export interface ReservationAsk {
  readonly botId: string;
  readonly plan: CallPlan;
  readonly params: BudgetParams;
  /** The clock to decide at (tests); undefined: Redis's own. */
  readonly now: number | undefined;
}

/** The arguments of one ACQUIRE_LUA call: KEYS then ARGV. */
export interface BatchCommand {
  readonly numKeys: number;
  readonly keys: string[];
  readonly argv: string[];
}

/** Binding codes of ACQUIRE_LUA's answers: index = code (go) or -code (refused). */
const BINDINGS: readonly (BudgetKind | undefined)[] = [undefined, 'pause', 'chat', 'group', 'bot'];
const GO_NOW: SharedDecision = Object.freeze({ ok: true, waitMs: 0 });

/** A bot's keys of this many bots are kept; a process paces its configured bots only. */
const MAX_CACHED_BOTS = 10_000;

/**
 * Builds the batch script's arguments (layout in pacing.lua.ts) and reads its
 * answers. A bot's own keys and a config's numbers are made into strings once, not
 * for every call: ioredis would convert each number of each call otherwise.
 */
export class ReservationBatches {
  readonly #botKeys = new Map<string, readonly [pauses: string, bins: string]>();
  readonly #paramArgs = new WeakMap<BudgetParams, readonly string[]>();

  constructor(private readonly keys: OutboundKeys) {}

  command(asks: readonly ReservationAsk[]): BatchCommand {
    const botIndex = new Map<string, number>();
    const keys: string[] = [];
    const sections: string[] = [];
    const sectionOf = new Map<BudgetParams, { bot: number; now: string; index: number }[]>();
    const calls: string[] = [];
    for (const ask of asks) {
      let bot = botIndex.get(ask.botId);
      if (bot === undefined) {
        bot = botIndex.size + 1;
        botIndex.set(ask.botId, bot);
        const [pauses, bins] = this.#keysOf(ask.botId);
        keys.push(pauses, bins);
      }
      const now = ask.now === undefined ? '' : String(ask.now);
      let known = sectionOf.get(ask.params);
      if (!known) sectionOf.set(ask.params, (known = []));
      let section = known.find((s) => s.bot === bot && s.now === now);
      if (!section) {
        section = { bot, now, index: sections.length / SECTION_ARGS + 1 };
        known.push(section);
        sections.push(String(bot), now, ...this.#argsOf(ask.params));
      }
      const chat = ask.plan.chat;
      const kind = chat ? (chat.kind === 'group' ? 'g' : 'p') : '-';
      calls.push(`${section.index}:${ask.plan.cost}:${kind}${chat?.key ?? ''}`);
    }
    return {
      numKeys: keys.length,
      keys,
      argv: [String(botIndex.size), String(sections.length / SECTION_ARGS), ...sections, ...calls],
    };
  }

  #keysOf(botId: string): readonly [string, string] {
    let keys = this.#botKeys.get(botId);
    if (!keys) {
      if (this.#botKeys.size >= MAX_CACHED_BOTS) this.#botKeys.clear();
      keys = [this.keys.pauses(botId), this.keys.bins(botId)];
      this.#botKeys.set(botId, keys);
    }
    return keys;
  }

  #argsOf(p: BudgetParams): readonly string[] {
    let args = this.#paramArgs.get(p);
    if (!args) {
      args = [
        p.maxWaitMs,
        p.transitMs,
        p.chatIntervalMs,
        p.chatBurst,
        p.groupLimit,
        p.groupWindowMs,
        p.binWidthMs,
        p.binCapacity,
        p.ringSize,
      ].map(String);
      this.#paramArgs.set(p, args);
    }
    return args;
  }
}

/** ARGV per section: bot, now, and the nine numbers of its BudgetParams. */
const SECTION_ARGS = 11;

/** One reservation's answer: its pair of the script's reply, or the error it met. */
export function decodeAnswer(code: unknown, ms: unknown): SharedDecision | Error {
  if (typeof code !== 'number' || typeof ms !== 'number') {
    return new Error(`pacing reservation failed in Redis: ${String(code)}`);
  }
  if (code < 0) return { ok: false, retryInMs: ms, binding: BINDINGS[-code] ?? 'bot' };
  const binding = BINDINGS[code];
  if (binding) return { ok: true, waitMs: ms, binding };
  return ms === 0 ? GO_NOW : { ok: true, waitMs: ms };
}
