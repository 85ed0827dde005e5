/** The connection's WAIT: how many replicas hold every write it made before the call. */
export interface WaitingClient {
  wait(replicas: number, timeoutMs: number): Promise<number>;
}

export interface ReplicaWaitSettings {
  /** 0: accepted updates are answered without waiting for replicas. */
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** Fewer replicas than asked held the writes within the timeout. */
export class ReplicaAckError extends Error {
  override readonly name = 'ReplicaAckError';

  constructor(
    readonly acknowledged: number,
    readonly wanted: number,
    readonly timeoutMs: number,
  ) {
    super(`${acknowledged} of ${wanted} Redis replicas acknowledged within ${timeoutMs} ms`);
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
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Holds an accepted update's answer until `redis.wait_replicas` replicas hold it, so a
 * failover cannot lose what Telegram was told had arrived (docs/scaling.md).
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
    private readonly redis: WaitingClient,
    private readonly settings: () => ReplicaWaitSettings,
  ) {}

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
   * Resolves once the configured number of replicas hold every write this process's
   * connection made before the call; at once when none is configured. Rejects with a
   * ReplicaAckError when fewer did within the timeout, or with Redis's error.
   */
  replicated(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
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
        this.#settle(group, error);
      },
      (error: unknown) => this.#settle(group, error ?? new Error('WAIT failed')),
    );
  }

  #settle(group: Waiter[], error: unknown): void {
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
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }
}
