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
