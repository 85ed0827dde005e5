import { Readable } from 'node:stream';
import { errorCodeOf } from './network-failure';

/** Why a request body we were streaming failed on our side of the connection. */
export interface RequestBodyFailure {
  code: string;
  reason: string;
}

/** Thrown inside body producers, so the failure keeps its own safe description. */
export class RequestBodyFailureError extends Error {
  constructor(readonly failure: RequestBodyFailure) {
    super(failure.reason);
  }
}

export function bodyFailureFrom(error: unknown, source: string): RequestBodyFailure {
  if (error instanceof RequestBodyFailureError) return error.failure;
  const code = errorCodeOf(error);
  return {
    code: 'EREQUESTBODY',
    reason: `request body failed: ${source} stream errored${code ? ` (${code})` : ''}`,
  };
}

/**
 * The chunks of a caller's stream. Only an error of that stream itself is reported
 * through `onError`; an error thrown in at a `yield` (the connection failed and the
 * consumer gave up) is not the body's fault and passes through untouched. The
 * stream is never destroyed here: it belongs to the caller (an incoming request the
 * gateway must still answer on), who decides what to do with the unread rest.
 */
export async function* sourceChunks(
  source: Readable,
  onError: (error: unknown) => Error,
): AsyncGenerator<Uint8Array> {
  const chunks = source.iterator({ destroyOnReturn: false });
  try {
    for (;;) {
      let step: IteratorResult<unknown>;
      try {
        step = await chunks.next();
      } catch (error) {
        throw onError(error);
      }
      if (step.done) return;
      const chunk = step.value;
      yield chunk instanceof Uint8Array ? chunk : Buffer.from(String(chunk));
    }
  } finally {
    await chunks.return?.();
  }
}

/** A caller's body stream relayed through our own Readable, recording its failure. */
export function relayBody(source: Readable): {
  stream: Readable;
  failure(): RequestBodyFailure | undefined;
} {
  let failure: RequestBodyFailure | undefined;
  const chunks = sourceChunks(source, (error) => {
    failure ??= bodyFailureFrom(error, 'body');
    return new RequestBodyFailureError(failure);
  });
  return { stream: Readable.from(chunks, { objectMode: false }), failure: () => failure };
}
