import type { RecordedCall } from './emulator.types';

type CallFilter = (call: RecordedCall) => boolean;

interface Waiter {
  filter: CallFilter;
  wanted: number;
  seen: number;
  resolve: (calls: RecordedCall[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The last `limit` calls in arrival order, in a ring so that recording stays O(1) and memory
 * flat however long a benchmark runs. Waiters count answered calls as they come instead of
 * rescanning the ring on every call.
 */
export class CallHistory {
  private readonly ring: (RecordedCall | undefined)[];
  private start = 0;
  private length = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly watchers = new Set<(call: RecordedCall) => void>();

  constructor(private readonly limit: number) {
    this.ring = new Array<RecordedCall | undefined>(limit);
  }

  push(call: RecordedCall): void {
    if (this.length < this.limit) {
      this.ring[(this.start + this.length) % this.limit] = call;
      this.length++;
    } else {
      this.ring[this.start] = call;
      this.start = (this.start + 1) % this.limit;
    }
  }

  toArray(filter?: CallFilter): RecordedCall[] {
    const out: RecordedCall[] = [];
    for (let i = 0; i < this.length; i++) {
      const call = this.ring[(this.start + i) % this.limit] as RecordedCall;
      if (!filter || filter(call)) out.push(call);
    }
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.start = 0;
    this.length = 0;
  }

  /**
   * `listener` sees every call once it has its answer, until the returned function is
   * called: for counts over more calls than the ring keeps (a benchmark's send rate).
   */
  watch(listener: (call: RecordedCall) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** Called once a call has its answer (status set). */
  answered(call: RecordedCall): void {
    for (const watcher of this.watchers) watcher(call);
    if (this.waiters.size === 0) return;
    for (const waiter of this.waiters) {
      if (waiter.filter(call) && ++waiter.seen >= waiter.wanted) this.settle(waiter);
    }
  }

  /** Resolves with the matching answered calls once there are at least `wanted` of them. */
  waitFor(filter: CallFilter, wanted: number, timeoutMs: number): Promise<RecordedCall[]> {
    const answered: CallFilter = (call) => call.status !== undefined && filter(call);
    const seen = this.toArray(answered).length;
    if (seen >= wanted) return Promise.resolve(this.toArray(answered));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        filter,
        wanted,
        seen,
        resolve: (calls) => resolve(calls),
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms: ${waiter.seen} of ${wanted} calls answered`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Fails every pending wait, e.g. when the emulator stops. */
  abortWaiters(reason: string): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(reason));
    }
    this.waiters.clear();
  }

  private settle(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve(this.toArray((call) => call.status !== undefined && waiter.filter(call)));
  }
}
