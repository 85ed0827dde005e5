import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CallGuard } from './call-guard';

// A JSON answer larger than this is not a Bot API answer (getUpdates tops out at a few MB).
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const PASSED_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'last-modified',
  'etag',
  'cache-control',
] as const;

export interface RawAnswer {
  ok: boolean;
  result?: unknown;
  error_code?: unknown;
  description?: unknown;
  parameters?: unknown;
}

export async function readAnswer(body: Readable): Promise<string | undefined> {
  const whole = await readWhole(body, MAX_ANSWER_BYTES);
  return whole?.toString('utf8');
}

/**
 * The whole body, or undefined past `limit` bytes: the body is then destroyed, or with
 * `'drain'` read to its end and dropped (a request's body, whose sender must still get
 * an answer). Read through its events rather than an async iterator: a Bot API call or
 * answer is one or two chunks, and the iterator's promises and end-of-stream watcher
 * cost more than the read.
 */
export function readWhole(
  body: Readable,
  limit: number,
  overLimit: 'destroy' | 'drain' = 'destroy',
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        done();
        if (overLimit === 'drain') body.resume();
        else body.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: unknown): void => {
      done();
      reject(error);
    };
    // Closed without its end or an error (destroyed by someone else, a caller that hung
    // up): never a whole body, and an error as an iterator would make it.
    const onClose = (): void => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    if (body.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}

export function parseRawAnswer(text: string | undefined): RawAnswer | undefined {
  if (text === undefined) return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isObject(answer) && typeof answer.ok === 'boolean'
    ? (answer as unknown as RawAnswer)
    : undefined;
}

/** The content headers of Telegram's answer that a forwarded call passes on. */
export function passedHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) passed[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return passed;
}

/**
 * Telegram's body through a Readable of our own, so a failure mid-stream reaches
 * the consumer as one of our errors, never as undici's. Destroying it releases
 * the connection at once.
 */
export function relayAnswer(
  source: Readable,
  guard: CallGuard | undefined,
  fail: (error: unknown) => Error,
): Readable {
  const relay = new Readable({
    read: () => {
      source.resume();
    },
    destroy: (error, callback) => {
      guard?.dispose();
      source.destroy();
      callback(error);
    },
  });
  source.on('data', (chunk: Buffer) => {
    if (!relay.push(chunk)) source.pause();
  });
  source.once('end', () => {
    guard?.dispose();
    relay.push(null);
  });
  source.on('error', (error) => relay.destroy(fail(error)));
  return relay;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** The answer's Content-Length, or Infinity when it has none (chunked). */
function declaredLength(headers: Record<string, string>): number {
  const length = Number(headers['content-length']);
  return headers['content-length'] !== undefined && Number.isSafeInteger(length) && length >= 0
    ? length
    : Infinity;
}

/**
 * Telegram's answer body as a forwarded call returns it: read whole when `bufferUpTo`
 * is given and its Content-Length is within it, else streamed through relayAnswer.
 */
export async function answerBody(
  source: Readable,
  headers: Record<string, string>,
  bufferUpTo: number | undefined,
  guard: CallGuard | undefined,
  fail: (error: unknown) => Error,
): Promise<Readable | Buffer> {
  if (bufferUpTo === undefined || declaredLength(headers) > bufferUpTo) {
    return relayAnswer(source, guard, fail);
  }
  let body: Buffer | undefined;
  try {
    body = await readWhole(source, bufferUpTo);
  } catch (error) {
    throw fail(error);
  } finally {
    guard?.dispose();
  }
  // More bytes than the length said: undici refuses that before we could see it.
  if (!body) throw fail(new Error('answer longer than its content-length'));
  return body;
}
