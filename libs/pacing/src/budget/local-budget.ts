import {
  chatAfter,
  EMPTY_CHAT,
  findSlot,
  groupAfter,
  type ChatState,
  type SlotDecision,
} from './budget-math';
import type { BudgetParams } from './budget-params';
import type { CallPlan } from './call-plan';
import { BOT_WIDE_WINDOW_MS, pauseScope, type PauseScope } from './pause-scope';

interface BotBook {
  bins: Map<number, number>;
  chats: Map<string, ChatState>;
  groups: Map<string, number[]>;
  botPauseUntil: number;
  chatPauses: Map<string, number>;
  recent429: Map<string, number>;
  sweptAt: number;
  /** The parameters of the latest reservation, which the sweep measures age with. */
  params?: BudgetParams;
}

/** Forgotten state is swept at most this often; idle chats cost nothing after it. */
const SWEEP_EVERY_MS = 10_000;

/** Pauses this process knows of, for /healthz and the admin page. */
export interface PauseView {
  /** End of a pause of the whole bot (ms), if one is in force. */
  botUntil?: number;
  chats: { chat: string; until: number }[];
}

/**
 * The budgets of one process alone, in memory: the same decisions as the Redis
 * script (budget-math), for the time Redis does not answer. Each process then holds
 * the bot's limits by itself; with several replicas the bot may send up to that many
 * times its limits until Redis is back, which beats sending nothing.
 */
export class LocalBudget {
  readonly #bots = new Map<string, BotBook>();

  reserve(botId: string, plan: CallPlan, p: BudgetParams, now: number): SlotDecision {
    const book = this.#book(botId, now);
    book.params = p;
    const chat = plan.chat;
    const decision = findSlot(
      {
        now,
        botPauseUntil: book.botPauseUntil || undefined,
        chatPauseUntil: chat ? book.chatPauses.get(chat.key) : undefined,
        chat: chat ? (book.chats.get(chat.key) ?? EMPTY_CHAT) : undefined,
        groupLog: chat?.kind === 'group' ? (book.groups.get(chat.key) ?? []) : undefined,
        binCount: (bin) => book.bins.get(bin) ?? 0,
      },
      plan.cost,
      p,
    );
    if (!decision.ok) return decision;
    book.bins.set(decision.bin, (book.bins.get(decision.bin) ?? 0) + plan.cost);
    if (chat) {
      const state = book.chats.get(chat.key) ?? EMPTY_CHAT;
      book.chats.set(chat.key, chatAfter(state, decision.slot, plan.cost, p));
      if (chat.kind === 'group') {
        const log = book.groups.get(chat.key) ?? [];
        book.groups.set(chat.key, groupAfter(log, decision.slot, plan.cost, p));
      }
    }
    return decision;
  }

  /** The latest end of a pause on this call's bot or chat, if one is in force. */
  pausedUntil(botId: string, chat: string | undefined, now: number): number | undefined {
    const book = this.#bots.get(botId);
    if (!book) return undefined;
    const until = Math.max(book.botPauseUntil, chat ? (book.chatPauses.get(chat) ?? 0) : 0);
    return until > now ? until : undefined;
  }

  /** Records a Telegram 429; the same bot-wide rule as the Redis script. */
  pause(
    botId: string,
    chat: string | undefined,
    retryAfterMs: number,
    now: number,
  ): { scope: PauseScope; until: number } {
    const book = this.#book(botId, now);
    let recent = 0;
    if (chat !== undefined) {
      book.recent429.set(chat, now);
      for (const [key, at] of book.recent429) {
        if (at <= now - BOT_WIDE_WINDOW_MS) book.recent429.delete(key);
        else recent++;
      }
    }
    const scope = pauseScope(chat, recent);
    const until = now + retryAfterMs;
    if (scope === 'bot' || chat === undefined) {
      book.botPauseUntil = Math.max(book.botPauseUntil, until);
    } else {
      book.chatPauses.set(chat, Math.max(book.chatPauses.get(chat) ?? 0, until));
    }
    return { scope, until };
  }

  pauses(botId: string, now: number): PauseView {
    const book = this.#bots.get(botId);
    const view: PauseView = { chats: [] };
    if (!book) return view;
    if (book.botPauseUntil > now) view.botUntil = book.botPauseUntil;
    for (const [chat, until] of book.chatPauses) {
      if (until > now) view.chats.push({ chat, until });
    }
    return view;
  }

  /** Chats with state kept, for tests that check memory stays bounded. */
  size(botId: string): number {
    const book = this.#bots.get(botId);
    return book ? book.chats.size + book.groups.size + book.bins.size : 0;
  }

  #book(botId: string, now: number): BotBook {
    let book = this.#bots.get(botId);
    if (!book) {
      book = {
        bins: new Map(),
        chats: new Map(),
        groups: new Map(),
        botPauseUntil: 0,
        chatPauses: new Map(),
        recent429: new Map(),
        sweptAt: now,
      };
      this.#bots.set(botId, book);
    } else if (now - book.sweptAt >= SWEEP_EVERY_MS) {
      sweep(book, now);
    }
    return book;
  }
}

/**
 * Drops what no longer changes a decision: past bins, chats whose bucket is full again
 * and whose last slot is past, groups whose window is empty, ended pauses.
 */
function sweep(book: BotBook, now: number): void {
  book.sweptAt = now;
  const p = book.params;
  if (p) {
    for (const bin of book.bins.keys()) {
      if ((bin + 1) * p.binWidthMs <= now) book.bins.delete(bin);
    }
    for (const [key, log] of book.groups) {
      const newest = log[0];
      if (newest === undefined || newest + p.groupWindowMs + p.transitMs <= now) {
        book.groups.delete(key);
      }
    }
  }
  for (const [key, state] of book.chats) {
    if (state.tat <= now && state.last <= now) book.chats.delete(key);
  }
  for (const [key, until] of book.chatPauses) if (until <= now) book.chatPauses.delete(key);
  for (const [key, at] of book.recent429) {
    if (at <= now - BOT_WIDE_WINDOW_MS) book.recent429.delete(key);
  }
}
