import type { TelegramEmulator } from '@relaygram/testing';
import type { InjectedUpdate } from './traffic';

/** The span in which ingress ran the enqueue script for an update (ms since the epoch). */
export interface AcceptanceSpan {
  /** When the update was put into the emulator: it cannot have been enqueued before. */
  from: number;
  /** When it was first seen confirmed (no longer pending); Infinity if not seen yet. */
  to: number;
}

/**
 * Bounds when each update was accepted, for scenarios whose expectations change over
 * time (a config reload). Ingress enqueues an update before it confirms it (a 2xx to
 * the webhook, an offset past it to getUpdates), and the emulator forgets an update
 * once confirmed: so the enqueue happened between the injection and the first sample
 * that no longer finds the update pending. Sampled every `everyMs`.
 */
export class AcceptanceClock {
  private readonly confirmedAt = new Map<string, number>();
  private waiting: InjectedUpdate[] = [];
  private timer: NodeJS.Timeout | undefined;
  private seen = 0;

  constructor(
    private readonly emulator: TelegramEmulator,
    private readonly bots: ReadonlyMap<string, number>,
    private readonly injected: readonly InjectedUpdate[],
    private readonly everyMs = 100,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.sample(), this.everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
  }

  sample(): void {
    const now = Date.now();
    this.waiting.push(...this.injected.slice(this.seen));
    this.seen = this.injected.length;
    const pending = new Map<string, Set<number>>();
    for (const [bot, ref] of this.bots) {
      pending.set(bot, new Set(this.emulator.pendingUpdates(ref).map((u) => u.update_id)));
    }
    this.waiting = this.waiting.filter((i) => {
      if (pending.get(i.bot)?.has(i.update.update_id)) return true;
      this.confirmedAt.set(key(i.bot, i.update.update_id), now);
      return false;
    });
  }

  span(injected: InjectedUpdate): AcceptanceSpan {
    return {
      from: injected.at,
      to: this.confirmedAt.get(key(injected.bot, injected.update.update_id)) ?? Infinity,
    };
  }
}

function key(bot: string, updateId: number): string {
  return `${bot}|${updateId}`;
}
