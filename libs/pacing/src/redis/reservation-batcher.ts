import { TimeoutError } from '@relaygram/observability';
import type { RedisClient } from '@relaygram/queue';
import type { BudgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import {
  decodeAnswer,
  type BatchCommand,
  type ReservationAsk,
  type ReservationBatches,
  type SharedDecision,
} from './reservation-batch';

interface Pending extends ReservationAsk {
  readonly since: number;
  settled: boolean;
  readonly resolve: (decision: SharedDecision) => void;
  readonly reject: (error: unknown) => void;
}

type BatchScript = (numKeys: number, keys: string[], argv: string[]) => Promise<unknown>;

/**
 * Reservations in one script call of this many at most: a script holds Redis while it
 * runs, and more would only lengthen that for every other client.
 */
export const MAX_BATCH = 100;

/**
 * While busy, a batch leaves at least this long after the one before it. Each script
 * call costs this process a socket write and a read, and on a virtual machine a write
 * that wakes Redis costs more than the reservations it carries: under a load of
 * thousands of calls a second, batches held for the gap carry more of them (about 17
 * against 11 in the bench's gateway section). A call waits at most this much more;
 * one at a time, the batcher is not busy and sends at once.
 */
export const BUSY_GAP_MS = 1;

/**
 * Sends reservations to Redis as one script call per batch. While this process is
 * busy (its last batch held several), those asked while none is on its way leave at
 * the end of the event loop's current turn (setImmediate), together: a busy gateway
 * reads many requests in one turn. While it is not (its last batch held one), a
 * reservation leaves as soon as the code that asked for it yields (nextTick): one
 * caller at a time gets one plain round trip, without the extra turn of the loop,
 * and a burst after a quiet spell sends its first alone and the rest together once
 * that one is answered, after which the batches are large again. Those asked while a
 * batch is on its way wait for its answer and then go together, while busy no sooner
 * than BUSY_GAP_MS after it left. Each reservation is
 * decided on its own within the script, in the order asked; one that fails there
 * fails alone.
 *
 * Every reservation is bounded: one unanswered `timeoutMs` after it was asked is
 * rejected with a TimeoutError (one timer for the batcher, not one per call), and
 * one still queued by then is never sent: its caller has given up on it.
 */
export class ReservationBatcher {
  #queue: Pending[] = [];
  #inFlight: Pending[] = [];
  #sending = false;
  #flushScheduled = false;
  /** Reservations in the last batch sent: 1 or none means this process is not busy. */
  #lastBatch = 0;
  #sentAt = 0;
  #watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly command: string,
    private readonly batches: ReservationBatches,
    private readonly timeoutMs: number,
  ) {}

  reserve(
    botId: string,
    plan: CallPlan,
    params: BudgetParams,
    now: number | undefined,
  ): Promise<SharedDecision> {
    return new Promise((resolve, reject) => {
      this.#queue.push({
        botId,
        plan,
        params,
        now,
        since: Date.now(),
        settled: false,
        resolve,
        reject,
      });
      if (!this.#watchdog) this.#watchdog = this.#arm();
      if (this.#sending || this.#flushScheduled) return;
      this.#flushScheduled = true;
      if (this.#lastBatch > 1) this.#afterGap();
      else process.nextTick(this.#onTurnEnd);
    });
  }

  /** The next flush, busy: at the end of this turn, and no sooner than BUSY_GAP_MS after the last batch. */
  #afterGap(): void {
    const wait = this.#sentAt + BUSY_GAP_MS - performance.now();
    if (wait > 0) setTimeout(this.#onTurnEnd, wait);
    else setImmediate(this.#onTurnEnd);
  }

  readonly #onTurnEnd = (): void => {
    // A timer counts from the loop's clock of the turn that set it, so it can fire a
    // little early: the gap is held to this process's monotonic clock.
    if (this.#lastBatch > 1 && this.#sentAt + BUSY_GAP_MS > performance.now()) {
      this.#afterGap();
      return;
    }
    this.#flushScheduled = false;
    if (!this.#sending) this.#flush();
  };

  #flush(): void {
    let batch = this.#queue;
    this.#queue = [];
    // Given up on by now (the timer may not have run yet): taking their slots would
    // only hold back the calls after them.
    const limit = Date.now() - this.timeoutMs;
    if (batch.length > 0 && (batch[0] as Pending).since <= limit) {
      const stale = batch.filter((item) => item.since <= limit);
      for (const item of stale) this.#timedOut(item);
      batch = batch.filter((item) => item.since > limit);
    }
    if (batch.length === 0) return;
    this.#lastBatch = batch.length;
    this.#sending = true;
    this.#inFlight = batch;
    this.#send(batch).then(
      (answers) => this.#answered(batch, answers),
      (error: unknown) => this.#answered(batch, undefined, error),
    );
    this.#sentAt = performance.now();
  }

  #send(batch: Pending[]): Promise<unknown[]> {
    const scripts = this.redis as unknown as Record<string, BatchScript>;
    if (batch.length <= MAX_BATCH) {
      const c = this.batches.command(batch);
      return (scripts[this.command] as BatchScript)
        .call(this.redis, c.numKeys, c.keys, c.argv)
        .then((reply) => [reply]);
    }
    const pipeline = this.redis.pipeline() as unknown as Record<string, BatchScript> & {
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (let i = 0; i < batch.length; i += MAX_BATCH) {
      const c: BatchCommand = this.batches.command(batch.slice(i, i + MAX_BATCH));
      (pipeline[this.command] as BatchScript).call(pipeline, c.numKeys, c.keys, c.argv);
    }
    return pipeline
      .exec()
      .then((results) => (results ?? []).map(([error, reply]) => (error ? error : reply)));
  }

  #answered(batch: Pending[], replies: unknown[] | undefined, error?: unknown): void {
    this.#sending = false;
    this.#inFlight = [];
    // The next batch leaves before this one's callers run on, or once the gap is over.
    if (this.#queue.length && !this.#flushScheduled) {
      if (this.#lastBatch > 1 && this.#sentAt + BUSY_GAP_MS > performance.now()) {
        this.#flushScheduled = true;
        this.#afterGap();
      } else {
        this.#flush();
      }
    }
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i] as Pending;
      if (item.settled) continue;
      item.settled = true;
      if (!replies) {
        item.reject(error);
        continue;
      }
      const reply = replies[Math.floor(i / MAX_BATCH)];
      if (!Array.isArray(reply)) {
        item.reject(reply instanceof Error ? reply : new Error('no answer from the pacing script'));
        continue;
      }
      const at = (i % MAX_BATCH) * 2;
      const decision = decodeAnswer(reply[at], reply[at + 1]);
      if (decision instanceof Error) item.reject(decision);
      else item.resolve(decision);
    }
  }

  /** The one timer, set for the oldest reservation still unanswered. */
  #arm(): NodeJS.Timeout | undefined {
    const oldest = this.#inFlight.find((item) => !item.settled) ?? this.#queue[0];
    if (!oldest) return undefined;
    const timer = setTimeout(this.#onWatchdog, oldest.since + this.timeoutMs - Date.now());
    timer.unref();
    return timer;
  }

  readonly #onWatchdog = (): void => {
    const limit = Date.now() - this.timeoutMs;
    for (const item of this.#inFlight) {
      if (!item.settled && item.since <= limit) this.#timedOut(item);
    }
    let stale = 0;
    while (stale < this.#queue.length && (this.#queue[stale] as Pending).since <= limit) stale++;
    for (const item of this.#queue.splice(0, stale)) this.#timedOut(item);
    this.#watchdog = this.#arm();
  };

  #timedOut(item: Pending): void {
    item.settled = true;
    item.reject(new TimeoutError(this.timeoutMs));
  }
}
