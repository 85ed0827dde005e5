/**
 * undici's headers and body timeouts cost nothing per call, but tick every half second:
 * a shorter deadline keeps a timer of its own (CallGuard), as does a call with the
 * caller's signal or a streamed upload (undici's headers timer only watches a stalled
 * write, and the deadline covers the whole upload).
 */
const UNDICI_TIMERS_FROM_MS = 1_000;

/**
 * One call's deadline and the caller's AbortSignal folded into the single signal
 * given to undici, remembering which of the two fired so the error can say so.
 */
export class CallGuard {
  readonly signal: AbortSignal;
  #timedOut = false;
  #aborted = false;
  readonly #controller = new AbortController();
  readonly #callerSignal?: AbortSignal;
  #timer?: NodeJS.Timeout;

  constructor(
    readonly timeoutMs: number,
    callerSignal?: AbortSignal,
  ) {
    this.signal = this.#controller.signal;
    this.#callerSignal = callerSignal;
    if (callerSignal?.aborted) {
      this.#onCallerAbort();
      return;
    }
    callerSignal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort();
    }, timeoutMs);
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Ends the deadline (the headers of a stream arrived); the caller's signal stays linked. */
  stopTimer(): void {
    clearTimeout(this.#timer);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
  }

  readonly #onCallerAbort = (): void => {
    if (this.#timedOut) return;
    this.#aborted = true;
    clearTimeout(this.#timer);
    this.#controller.abort();
  };
}

/** The call's own timer and signal, when undici's timers cannot keep its deadline. */
export function callGuard(
  timeoutMs: number,
  options: { signal?: AbortSignal } | undefined,
  streamedBody: boolean,
): CallGuard | undefined {
  const signal = options?.signal;
  if (signal === undefined && !streamedBody && timeoutMs >= UNDICI_TIMERS_FROM_MS) return undefined;
  return new CallGuard(timeoutMs, signal);
}
