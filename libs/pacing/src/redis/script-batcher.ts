import type { RedisClient } from '@relaygram/queue';

interface Queued {
  args: (string | number)[];
  since: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Sends calls of one script to Redis so that a busy process writes them together.
 * Calls made while none is on its way go out at the end of the event loop's current
 * turn (setImmediate), together: a busy gateway reads many requests in one turn, and
 * an idle one adds no timer delay, only the rest of the turn. Calls made while one is
 * on its way wait for its answer and then go as one pipeline. Each call is still its
 * own script, atomic on its own; only the round trips and the socket writes are
 * shared, which is most of what a call costs on both ends.
 */
export class ScriptBatcher {
  #inFlight = false;
  #flushScheduled = false;
  #queue: Queued[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly command: string,
    /** Calls queued longer than this were given up by their callers: not sent. */
    private readonly staleMs: number,
  ) {}

  call(args: (string | number)[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ args, since: Date.now(), resolve, reject });
      if (this.#inFlight || this.#flushScheduled) return;
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        if (!this.#inFlight) this.#flush();
      });
    });
  }

  #flush(): void {
    const now = Date.now();
    const batch = this.#queue.filter((q) => now - q.since <= this.staleMs);
    for (const gone of this.#queue) {
      if (now - gone.since > this.staleMs) gone.reject(new Error('given up before it was sent'));
    }
    this.#queue = [];
    if (batch.length === 0) return;
    this.#inFlight = true;
    const done = () => {
      this.#inFlight = false;
      if (this.#queue.length) this.#flush();
    };
    if (batch.length === 1) {
      const [only] = batch as [Queued];
      this.#send(only.args).then(
        (value) => {
          done();
          only.resolve(value);
        },
        (error: unknown) => {
          done();
          only.reject(error);
        },
      );
      return;
    }
    const pipeline = this.redis.pipeline();
    const queue = pipeline as unknown as Record<string, (...args: (string | number)[]) => unknown>;
    for (const item of batch)
      (queue[this.command] as (...a: (string | number)[]) => unknown)(...item.args);
    pipeline.exec().then(
      (results) => {
        done();
        batch.forEach((item, i) => {
          const [error, value] = results?.[i] ?? [new Error('no answer in the pipeline'), null];
          if (error) item.reject(error);
          else item.resolve(value);
        });
      },
      (error: unknown) => {
        done();
        for (const item of batch) item.reject(error);
      },
    );
  }

  #send(args: (string | number)[]): Promise<unknown> {
    const redis = this.redis as unknown as Record<
      string,
      (...a: (string | number)[]) => Promise<unknown>
    >;
    return (redis[this.command] as (...a: (string | number)[]) => Promise<unknown>).apply(
      this.redis,
      args,
    );
  }
}
