import type { RedisClient } from '@relaygram/queue';

/** Why a waiting getUpdates looks again. */
export type WakeReason = 'notice' | 'timeout' | 'aborted' | 'closing';

export interface PullWait {
  /** Settles once: a notice for the lane, the time is up, the caller left, or shutdown. */
  readonly done: Promise<WakeReason>;
  cancel(): void;
}

/**
 * Wakes the getUpdates calls waiting in this process when a delivery reaches their lane
 * (the enqueue publishes the lane id on its route's notice channel) or another call
 * takes their lane over. One subscriber connection per process, on one pattern that
 * covers every pull route, so a waiting call costs a timer and a map entry, never a
 * connection, and a reload changes nothing here.
 *
 * A notice published while the subscriber reconnects is lost, so every waiter looks
 * again once the connection is back; and callers register before they look, so a
 * notice between their look and their wait is never missed.
 */
export class PullNotices {
  readonly #waiters = new Map<string, Set<(reason: WakeReason) => void>>();
  #subscriber?: RedisClient;
  #subscribed?: Promise<void>;
  #closing = false;

  constructor(
    private readonly pattern: string,
    private readonly subscriberFactory: () => RedisClient,
    private readonly timeoutMs = 1000,
  ) {}

  get closing(): boolean {
    return this.#closing;
  }

  /** How many calls wait in this process. */
  get waiting(): number {
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  /** Resolves once the subscription is in place (bounded); rejects when Redis does not answer. */
  ready(): Promise<void> {
    if (!this.#subscribed) {
      const subscriber = this.subscriberFactory();
      this.#subscriber = subscriber;
      let connected = false;
      subscriber.on('pmessage', (_pattern: string, _channel: string, lane: string) =>
        this.#wake(lane, 'notice'),
      );
      subscriber.on('ready', () => {
        if (connected) this.#wakeAll('notice');
        connected = true;
      });
      this.#subscribed = subscriber.psubscribe(this.pattern).then(
        () => undefined,
        (error: unknown) => {
          this.#subscribed = undefined;
          this.#subscriber = undefined;
          subscriber.disconnect();
          throw error;
        },
      );
    }
    return bounded(this.#subscribed, this.timeoutMs);
  }

  wait(lane: string, ms: number, signal?: AbortSignal): PullWait {
    let settle!: (reason: WakeReason) => void;
    const done = new Promise<WakeReason>((resolve) => (settle = resolve));
    const waiters = this.#waiters.get(lane) ?? new Set<(reason: WakeReason) => void>();
    this.#waiters.set(lane, waiters);
    const finish = (reason: WakeReason) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      waiters.delete(finish);
      if (waiters.size === 0 && this.#waiters.get(lane) === waiters) this.#waiters.delete(lane);
      settle(reason);
    };
    const onAbort = () => finish('aborted');
    const timer = setTimeout(() => finish('timeout'), ms);
    waiters.add(finish);
    if (signal?.aborted) finish('aborted');
    else signal?.addEventListener('abort', onAbort, { once: true });
    if (this.#closing) finish('closing');
    return { done, cancel: () => finish('timeout') };
  }

  /** Shutdown: every waiting call answers with what it has now. */
  stopWaiting(): void {
    this.#closing = true;
    this.#wakeAll('closing');
  }

  async close(): Promise<void> {
    this.stopWaiting();
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  #wake(lane: string, reason: WakeReason): void {
    for (const finish of [...(this.#waiters.get(lane) ?? [])]) finish(reason);
  }

  #wakeAll(reason: WakeReason): void {
    for (const lane of [...this.#waiters.keys()]) this.#wake(lane, reason);
  }
}

function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis gave no answer')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
