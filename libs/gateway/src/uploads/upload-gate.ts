import { Readable } from 'node:stream';

export class UploadTooLargeError extends Error {
  override readonly name = 'UploadTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the upload is larger than ${limitBytes} bytes`);
  }
}

/** Why a gated upload ended early on our side. */
export class UploadRefusedError extends Error {
  override readonly name = 'UploadRefusedError';
}

export type SourceOutcome = 'ended' | 'failed';

export interface UploadGateOptions {
  limitBytes: number;
  /** Keep the outgoing body open after the source ended, until release(). */
  holdEnd?: boolean;
  /** Looks at each chunk before it is relayed; an error refuses the upload with it. */
  inspect?: (chunk: Buffer) => Error | undefined;
}

/**
 * Relays an incoming file (or body) stream to Telegram chunk by chunk, with
 * backpressure both ways, and:
 * - fails the outgoing body as soon as more than `limitBytes` arrived, so Telegram
 *   never gets a truncated file that looks complete;
 * - with `inspect`, refuses the upload before relaying a chunk found wrong;
 * - with `holdEnd`, keeps the outgoing body open after the source ended until
 *   `release()` (or `refuse()`), so the request is checked to its end (no part after
 *   the file) before Telegram can act on it.
 * The source is never destroyed: after a refusal it is drained, so the caller can
 * still answer on the connection.
 */
export class UploadGate {
  readonly stream: Readable;
  /** Resolves when the source ended or the gate failed; never rejects. */
  readonly sourceDone: Promise<SourceOutcome>;
  #bytes = 0;
  #tooLarge = false;
  #ended = false;
  #detached = false;
  #refusal?: Error;
  #settle!: (outcome: SourceOutcome) => void;

  constructor(
    private readonly source: Readable,
    private readonly options: UploadGateOptions,
  ) {
    this.sourceDone = new Promise((resolve) => (this.#settle = resolve));
    this.stream = new Readable({
      read: () => {
        if (!this.#ended) source.resume();
      },
      destroy: (error, callback) => {
        this.#detach();
        callback(error);
      },
    });
    // Failures reach the consumer through its own read; this keeps a refusal after the
    // consumer let go from becoming an uncaught 'error' event.
    this.stream.on('error', () => undefined);
    source.on('data', this.#onData);
    source.once('end', this.#onEnd);
    source.once('error', this.#onError);
  }

  /** The source was read to its end. */
  get sourceEnded(): boolean {
    return this.#ended;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get tooLarge(): boolean {
    return this.#tooLarge;
  }

  /** Why the upload was refused (too large, or what `inspect` found), if it was. */
  get refusal(): Error | undefined {
    return this.#refusal;
  }

  /** Ends the outgoing body after a held source end. */
  release(): void {
    if (!this.stream.destroyed) this.stream.push(null);
  }

  /** Fails the outgoing body (Telegram sees a broken request and acts on nothing). */
  refuse(error: Error = new UploadRefusedError('the upload was refused')): void {
    this.#refusal ??= error;
    this.#detach();
    if (!this.stream.destroyed) this.stream.destroy(error);
    this.#settle('failed');
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#bytes += chunk.length;
    if (this.#bytes > this.options.limitBytes) {
      this.#tooLarge = true;
      this.refuse(new UploadTooLargeError(this.options.limitBytes));
      return;
    }
    const problem = this.options.inspect?.(chunk);
    if (problem) {
      this.refuse(problem);
      return;
    }
    if (!this.stream.push(chunk)) this.source.pause();
  };

  readonly #onEnd = (): void => {
    this.#ended = true;
    if (!this.options.holdEnd) this.stream.push(null);
    this.#settle('ended');
  };

  readonly #onError = (error: Error): void => {
    this.#detach();
    if (!this.stream.destroyed) this.stream.destroy(error);
    this.#settle('failed');
  };

  /** Stops relaying; whatever the source still holds is read and thrown away. */
  #detach(): void {
    if (this.#detached) return;
    this.#detached = true;
    this.source.off('data', this.#onData);
    this.source.off('end', this.#onEnd);
    this.source.off('error', this.#onError);
    // An error after this point is the drain's, and must not crash the process.
    this.source.on('error', () => undefined);
    this.source.resume();
  }
}
