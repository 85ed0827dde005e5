import type { TelegramEmulator } from '@relaygram/testing';

export type TelegramFaultKind = '429' | '5xx' | 'drop';

/**
 * One fault in five is a 429: Telegram answers them seldom to a bot that keeps to its
 * limits, and 429s on three chats within 2 s read as the bot's own limit (a pause of
 * the whole bot, libs/pacing), which a run should meet now and then, not all along.
 */
const KINDS: readonly TelegramFaultKind[] = ['429', '5xx', '5xx', 'drop', 'drop'];
const SERVER_ERRORS = [500, 502, 503] as const;

/** How often the calls made since the last look are counted and their faults placed. */
const TICK_MS = 100;

/**
 * Telegram misbehaving at random, as the outbox must survive it: about `share` of the
 * bot's calls of `method` are answered with a 429 (retry_after 1-3 s), a 5xx, or a
 * dropped connection (see KINDS). The emulator takes forced answers in turn, so they
 * are placed as calls come (each call made since the last look places one with
 * probability `share`): when few calls are left, as at the end, few faults are.
 * Forced answers are not the emulator's flood limits: those stay in force and count
 * apart (FloodStats), so a run tells the two kinds of 429 apart.
 */
export class TelegramFaults {
  /** Faults put in place, by kind (each taken by the next matching call). */
  readonly placed = new Map<TelegramFaultKind, number>();
  /** When `stop` was first called. */
  stoppedAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The last call of `method` looked at (its `seq`); history is bounded, seq is not. */
  #lastSeq = -1;

  constructor(
    private readonly emulator: TelegramEmulator,
    private readonly bot: number,
    private readonly method: string,
    private readonly share: number,
  ) {}

  start(): void {
    if (this.#timer) return;
    this.#newCalls();
    this.#timer = setInterval(() => {
      for (let n = this.#newCalls(); n > 0; n--) if (Math.random() < this.share) this.#place();
    }, TICK_MS);
  }

  /** No more faults; those placed and not taken yet are withdrawn. */
  stop(): void {
    this.stoppedAt ??= Date.now();
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.emulator.clearFailures(this.bot);
  }

  /** Calls of `method` that arrived since the last look. */
  #newCalls(): number {
    const calls = this.emulator.calls(this.bot, { method: this.method });
    let fresh = 0;
    for (let i = calls.length - 1; i >= 0 && (calls[i]?.seq ?? -1) > this.#lastSeq; i--) fresh++;
    this.#lastSeq = calls.at(-1)?.seq ?? this.#lastSeq;
    return fresh;
  }

  #place(): void {
    const kind = KINDS[Math.floor(Math.random() * KINDS.length)] as TelegramFaultKind;
    if (kind === '429') {
      this.emulator.failTooManyRequests(this.bot, 1 + Math.floor(Math.random() * 3), this.method);
    } else if (kind === '5xx') {
      const code = SERVER_ERRORS[Math.floor(Math.random() * SERVER_ERRORS.length)] as number;
      this.emulator.failServerError(this.bot, code, this.method);
    } else {
      this.emulator.fail(this.bot, { method: this.method, drop: true });
    }
    this.placed.set(kind, (this.placed.get(kind) ?? 0) + 1);
  }
}
