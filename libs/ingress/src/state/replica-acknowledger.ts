import type { ReplicaWait, WriteConnection } from '@relaygram/queue';

export interface ReplicaWaitSettings {
  /** 0: accepted updates are answered without waiting for replicas. */
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * Fewer replicas than asked held the writes within the timeout, or the WAIT could not
 * speak for them: it went out on another connection than the writes (a reconnect or a
 * failover in between).
 */
export class ReplicaAckError extends Error {
  override readonly name = 'ReplicaAckError';

  constructor(
    readonly acknowledged: number,
    readonly wanted: number,
    readonly timeoutMs: number,
    message = `${acknowledged} of ${wanted} Redis replicas acknowledged within ${timeoutMs} ms`,
  ) {
    super(message);
  }
}

/** Whether replicas confirm what this process accepts, for /healthz. */
export interface ReplicaAckState {
  readonly replicas: number;
  /** False since the last WAIT that fell short (or failed), until one that did not. */
  readonly confirming: boolean;
  /** When the WAITs started falling short (ms). */
  readonly failingSince?: number;
  readonly problem?: string;
}

interface Waiter {
  /** The connection the caller's writes went out on. */
  since: WriteConnection;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Holds an accepted update's answer until `redis.wait_replicas` replicas hold it, so a
 * failover cannot lose what Telegram was told had arrived (docs/scaling.md).
 *
 * A caller takes `connection()` before its writes and passes it to `replicated`: a WAIT
 * speaks only for writes made on its own connection, so when the connection changed in
 * between (ioredis reconnected, or a cluster slot moved to the promoted replica) the
 * caller is refused, and Telegram sends the update again, instead of being told that a
 * WAIT on a fresh connection, which covers nothing, confirmed it.
 *
 * `WAIT` covers every write its connection made before it, and it holds that connection
 * while it waits, so one WAIT is in flight at a time and it answers everyone who asked
 * before it was sent (a group commit): those who ask while it waits go together in the
 * next. Under load a WAIT covers many updates, and the connection is held about one
 * replication round trip per group, not per update.
 */
export class ReplicaAcknowledger {
  #next: Waiter[] = [];
  #waiting = false;
  #failingSince: number | undefined;
  #problem: string | undefined;

  constructor(
    private readonly redis: ReplicaWait,
    private readonly settings: () => ReplicaWaitSettings,
  ) {}

  /**
   * The connection writes go out on now: taken before the writes `replicated` confirms.
   * Not looked up while no replica is asked for (a reload that asks for one in between
   * refuses that caller once: safe).
   */
  connection(): WriteConnection {
    return this.enabled ? this.redis.connection() : undefined;
  }

  get enabled(): boolean {
    return this.settings().replicas > 0;
  }

  state(): ReplicaAckState {
    const { replicas } = this.settings();
    if (this.#failingSince === undefined) return { replicas, confirming: true };
    return {
      replicas,
      confirming: false,
      failingSince: this.#failingSince,
      problem: this.#problem,
    };
  }

  /**
   * Resolves once the configured number of replicas hold every write made on `since`
   * (the `connection()` taken before them) up to the call; at once when none is
   * configured. Rejects with a ReplicaAckError when fewer did within the timeout or
   * the connection is no longer `since`, or with Redis's error.
   */
  replicated(since: WriteConnection): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ since, resolve, reject });
      if (!this.#waiting) this.#send();
    });
  }

  #send(): void {
    const group = this.#next;
    this.#next = [];
    const { replicas, timeoutMs } = this.settings();
    this.#waiting = true;
    this.redis.wait(replicas, timeoutMs).then(
      (acknowledged) => {
        const error =
          acknowledged >= replicas
            ? undefined
            : new ReplicaAckError(acknowledged, replicas, timeoutMs);
        // Read after the answer: a WAIT that ioredis re-sent on a new connection shows.
        this.#settle(group, error, this.redis.connection());
      },
      (error: unknown) => this.#settle(group, error ?? new Error('WAIT failed')),
    );
  }

  #settle(group: Waiter[], error: unknown, waitedOn?: WriteConnection): void {
    this.#waiting = false;
    if (error === undefined) {
      this.#failingSince = undefined;
      this.#problem = undefined;
    } else {
      this.#failingSince ??= Date.now();
      this.#problem = error instanceof Error ? error.message : String(error);
    }
    if (this.#next.length > 0) this.#send();
    for (const waiter of group) {
      if (error !== undefined) waiter.reject(error);
      else if (waiter.since === undefined || waiter.since !== waitedOn) {
        waiter.reject(connectionChanged(this.settings()));
      } else waiter.resolve();
    }
  }
}

function connectionChanged({ replicas, timeoutMs }: ReplicaWaitSettings): ReplicaAckError {
  return new ReplicaAckError(
    0,
    replicas,
    timeoutMs,
    'the Redis connection changed between the writes and their WAIT: replicas could not confirm them',
  );
}
