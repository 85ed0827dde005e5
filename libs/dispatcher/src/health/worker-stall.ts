/** A worker as the stall watch looks at it: its queue's keys and what it has taken. */
export interface WorkerActivity {
  /** For people: `route <name>`, `maintenance`. */
  name: string;
  /** The BullMQ queue (unique, unlike route names against `maintenance`). */
  queue: string;
  /** The queue's wait list and delayed set. */
  waitKey: string;
  delayedKey: string;
  started: number;
  freeSlot: boolean;
}

/** What one look at a route's worker and its queue found. */
export interface WorkerSample {
  /** Id of the oldest job in the route's BullMQ wait list; undefined when none waits. */
  oldestWaiting: string | undefined;
  /** Jobs this process's worker has started so far (a counter, never reset). */
  started: number;
  /** Whether the worker had a slot free: fewer jobs running than its concurrency. */
  freeSlot: boolean;
  /** When the look was taken (ms, this process's clock). */
  at: number;
}

/** A worker that takes no job while one waits and it has room for it. */
export interface WorkerStall {
  /** The job that waits, unclaimed, since the watch began. */
  job: string;
  /** When this process first saw it waiting with a slot free (ms). */
  since: number;
}

interface Watch {
  job: string;
  started: number;
  since: number;
}

/**
 * Tells a stuck worker from a busy or idle one, by what it does rather than by what
 * BullMQ reports of itself: a worker whose connection never comes back (an ioredis
 * `connect()` that never settles) still says it runs. A worker is stalled once the same
 * job has stayed first in the wait list for `stallAfterMs` while it had a free slot at
 * every look and started no job at all. A job that waits while every slot is taken, a
 * queue that moves (its first job changes) or any job started clears the watch. Other
 * dispatchers take from the same list, so a stall also means none of them took it.
 */
export class WorkerStallWatch {
  readonly #watches = new Map<string, Watch>();

  constructor(private readonly stallAfterMs: number) {}

  /** Feeds one look at a route; returns the stall it shows, if any. */
  observe(route: string, sample: WorkerSample): WorkerStall | undefined {
    const { oldestWaiting, started, freeSlot, at } = sample;
    if (oldestWaiting === undefined || !freeSlot) {
      this.#watches.delete(route);
      return undefined;
    }
    const watch = this.#watches.get(route);
    if (!watch || watch.job !== oldestWaiting || watch.started !== started) {
      this.#watches.set(route, { job: oldestWaiting, started, since: at });
      return undefined;
    }
    return at - watch.since >= this.stallAfterMs
      ? { job: watch.job, since: watch.since }
      : undefined;
  }

  /** Routes no longer served here (removed by a reload) are no longer watched. */
  keepOnly(routes: ReadonlySet<string>): void {
    for (const route of this.#watches.keys()) if (!routes.has(route)) this.#watches.delete(route);
  }
}
