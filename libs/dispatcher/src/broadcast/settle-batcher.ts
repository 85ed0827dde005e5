import type { RecipientResult } from '@relaygram/queue';

export interface SettleBatcherOptions {
  /** Results waiting (over every broadcast) that make a flush at once. */
  maxWaiting?: number;
  /** A result waits at most this long before a flush. */
  delayMs?: number;
  /** After a flush that failed, its results are flushed again this much later. */
  retryMs?: number;
}

type Settle = (bot: string, id: string, results: RecipientResult[]) => Promise<unknown>;
type OnFailure = (error: unknown, bot: string, id: string, results: number) => void;

interface Waiting {
  bot: string;
  id: string;
  results: RecipientResult[];
  /** Resolve the `add` of each result, in the same order. */
  settled: (() => void)[];
}

/**
 * Results of broadcast sends, settled in batches: one script per broadcast per flush
 * (at `maxWaiting` results waiting or `delayMs` after the first), never one per send.
 * `add` resolves once its result is settled, so the runner can hold the recipient's
 * slot until then: what a killed process leaves to be sent again is then never more
 * than its slots. A flush that fails keeps its results for the next one; their
 * recipients stay claimed meanwhile, and only if Redis stays away past the claims'
 * lease are they claimed, and sent, again.
 */
export class SettleBatcher {
  #waiting = new Map<string, Waiting>();
  /** Results in #waiting, and in flushes under way. */
  #waitingCount = 0;
  #flushingCount = 0;
  #timer: NodeJS.Timeout | undefined;
  #closing = false;
  #closed = false;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #maxWaiting: number;
  readonly #delayMs: number;
  readonly #retryMs: number;

  constructor(
    private readonly settle: Settle,
    private readonly onFailure: OnFailure,
    options: SettleBatcherOptions = {},
  ) {
    this.#maxWaiting = options.maxWaiting ?? 64;
    this.#delayMs = options.delayMs ?? 50;
    this.#retryMs = options.retryMs ?? 1_000;
  }

  /** Results not settled yet, flushing or waiting. */
  get pending(): number {
    return this.#waitingCount + this.#flushingCount;
  }

  /**
   * Resolves once the result is settled, or once `close` gave up on it. After `close`
   * it is not settled at all (its recipient's claim runs out and it goes again).
   */
  add(bot: string, id: string, result: RecipientResult): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const settled = new Promise<void>((resolve) => this.#put(bot, id, [result], [resolve]));
    if (this.#waitingCount >= this.#maxWaiting && !this.#closing) void this.flush();
    else this.#schedule(this.#delayMs);
    return settled;
  }

  /** Settles everything waiting now; true when every settle went through. */
  async flush(): Promise<boolean> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batches = [...this.#waiting.values()];
    this.#waiting = new Map();
    this.#flushingCount += this.#waitingCount;
    this.#waitingCount = 0;
    const run = Promise.all(batches.map((batch) => this.#settleOne(batch))).then((oks) =>
      oks.every(Boolean),
    );
    const tracked = run.then(() => undefined);
    this.#inFlight.add(tracked);
    try {
      return await run;
    } finally {
      this.#inFlight.delete(tracked);
    }
  }

  /**
   * Shutdown: waits for the flushes under way, then flushes what is left, trying up to
   * `tries` times; every `add` has resolved after. The results that could not be
   * settled (0 when all were).
   */
  async close(tries = 5): Promise<number> {
    this.#closing = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (let i = 0; i < tries && this.pending > 0; i++) {
      await Promise.all(this.#inFlight);
      if (this.#waitingCount === 0) continue;
      if (await this.flush()) continue;
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.#retryMs, 200)));
    }
    await Promise.all(this.#inFlight);
    this.#closed = true;
    const unsettled = this.pending;
    for (const batch of this.#waiting.values()) for (const resolve of batch.settled) resolve();
    this.#waiting = new Map();
    this.#waitingCount = 0;
    return unsettled;
  }

  async #settleOne(batch: Waiting): Promise<boolean> {
    try {
      await this.settle(batch.bot, batch.id, batch.results);
      for (const resolve of batch.settled) resolve();
      return true;
    } catch (error) {
      this.onFailure(error, batch.bot, batch.id, batch.results.length);
      this.#put(batch.bot, batch.id, batch.results, batch.settled);
      this.#schedule(this.#retryMs);
      return false;
    } finally {
      this.#flushingCount -= batch.results.length;
    }
  }

  #put(bot: string, id: string, results: RecipientResult[], settled: (() => void)[]): void {
    const key = `${bot}/${id}`;
    let waiting = this.#waiting.get(key);
    if (!waiting) {
      waiting = { bot, id, results: [], settled: [] };
      this.#waiting.set(key, waiting);
    }
    for (const result of results) waiting.results.push(result);
    for (const resolve of settled) waiting.settled.push(resolve);
    this.#waitingCount += results.length;
  }

  #schedule(delayMs: number): void {
    if (this.#closing) return;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, delayMs);
  }
}
