import type { Update } from '@relaygram/routing';
import type { TelegramEmulator } from '@relaygram/testing';
import { sleep } from './app-process';
import { HOOK_BOT, POLL_BOT } from './chaos-cluster';

export interface TrafficOptions {
  /** Share of messages carrying `#reject` (the flaky receiver rejects those with 422). */
  rejectShare?: number;
  /** Private chats per bot; groups get a fifth of that. */
  chats?: number;
}

export interface InjectedUpdate {
  bot: string;
  update: Update;
  /** Date.now() when it was put into the emulator: latency counts from here. */
  at: number;
}

const TICK_MS = 50;
/** Chats of `wave` updates have ids from here on; the others are below. */
export const WAVE_CHATS = 100_000;

/** The chat an update belongs to (a message's, or a callback query's message's); 0 if none. */
export function chatOf(update: Update | undefined): number {
  const u = update as
    | {
        message?: { chat?: { id?: number } };
        callback_query?: { message?: { chat?: { id?: number } } };
      }
    | undefined;
  return u?.message?.chat?.id ?? u?.callback_query?.message?.chat?.id ?? 0;
}

/**
 * Makes the updates of one scenario: text messages in private chats and groups for both
 * bots (a tenth of them /buy, a twentieth /help), and callback queries for the polling bot
 * only. The webhook bot gets messages only: the emulator, like Telegram, sends a chat's
 * messages one at a time but callback queries on a per-user queue beside them, so their
 * acceptance order relative to the chat's messages is not known from outside.
 */
export class Traffic {
  readonly injected: InjectedUpdate[] = [];
  private seq = 0;
  private bursts = 0;
  private waves = 0;

  constructor(
    private readonly emulator: TelegramEmulator,
    private readonly bots: { hook: number; poll: number },
    private readonly options: TrafficOptions = {},
  ) {}

  /** One update for `bot` (`hook-bot` or `poll-bot`), in a random chat or in `chat`. */
  next(bot: string, chat?: { chatId: number; userId: number }): InjectedUpdate {
    const n = ++this.seq;
    const chats = this.options.chats ?? 150;
    const pick = Math.floor(Math.random() * (chats + Math.ceil(chats / 5)));
    const group = chat ? chat.chatId < 0 : pick >= chats;
    const userId = chat?.userId ?? 10_000 + (group ? Math.floor(Math.random() * chats) : pick);
    const chatId = chat?.chatId ?? (group ? -(1_000_000 + (pick - chats)) : userId);
    const ref = bot === HOOK_BOT ? this.bots.hook : this.bots.poll;
    let update: Update;
    if (bot === POLL_BOT && !group && Math.random() < 0.2) {
      update = this.emulator.callback(ref, { chatId, userId, data: `cb:${n}` });
    } else {
      update = this.emulator.message(ref, {
        chatId,
        userId,
        chatType: group ? 'group' : 'private',
        text: this.text(n),
      });
    }
    const injected = { bot, update, at: Date.now() };
    this.injected.push(injected);
    return injected;
  }

  private text(n: number): string {
    const roll = Math.random();
    if (roll < (this.options.rejectShare ?? 0)) return `#reject ${n}`;
    if (roll < 0.1) return `/buy item-${n}`;
    if (roll < 0.15) return `/help ${n}`;
    return `chaos message ${n}`;
  }

  /**
   * Injects `count` updates at `perSecond`, alternating bots (or only `onlyBot`).
   * `during` is called every tick with the share done, for faults timed by progress.
   */
  async load(
    count: number,
    perSecond: number,
    options: { onlyBot?: string; during?: (done: number) => void | Promise<void> } = {},
  ): Promise<void> {
    const started = Date.now();
    let sent = 0;
    while (sent < count) {
      const due = Math.min(count, Math.ceil(((Date.now() - started) / 1000) * perSecond));
      for (; sent < due; sent++) this.next(options.onlyBot ?? (sent % 2 ? HOOK_BOT : POLL_BOT));
      await options.during?.(sent / count);
      await sleep(TICK_MS);
    }
  }

  /**
   * Injects updates at `perSecond` for as long as `keepGoing()` says, alternating bots
   * (or only `onlyBot`): for faults whose length is not known in advance.
   */
  async loadWhile(
    perSecond: number,
    keepGoing: () => boolean,
    options: { onlyBot?: string } = {},
  ): Promise<void> {
    const started = Date.now();
    let sent = 0;
    while (keepGoing()) {
      const due = Math.ceil(((Date.now() - started) / 1000) * perSecond);
      for (; sent < due; sent++) this.next(options.onlyBot ?? (sent % 2 ? HOOK_BOT : POLL_BOT));
      await sleep(TICK_MS);
    }
  }

  /**
   * `count` updates of the polling bot in one private chat at once: getUpdates hands
   * them over a hundred at a time, so the chat's lanes fill faster than they drain and
   * a drain job delivers 100 in a row on one lane, where it yields (fairness).
   */
  burst(count: number): void {
    const userId = 20_000 + (++this.bursts % 50);
    for (let i = 0; i < count; i++) this.next(POLL_BOT, { chatId: userId, userId });
  }

  /**
   * `count` updates of `bot` at once, each in a private chat of its own: as many lanes
   * per route become ready together, more than there are drain jobs waiting, so jobs
   * are armed and, done with one lane, claim the next ready one.
   */
  wave(bot: string, count: number): void {
    const first = WAVE_CHATS + ++this.waves * count;
    for (let i = 0; i < count; i++) this.next(bot, { chatId: first + i, userId: first + i });
  }

  /** Ids of this scenario's updates per bot, for the emulator's pending lists. */
  idsOf(bot: string): Set<number> {
    return new Set(this.injected.filter((i) => i.bot === bot).map((i) => i.update.update_id));
  }
}
