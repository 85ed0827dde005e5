import { Readable } from 'node:stream';
import { MultipartNameScanner } from './multipart-name-scanner';

export interface PeekedFields {
  /** The text of the fields asked for that came before the peek stopped. */
  fields: Record<string, string>;
  /** The body to relay, whole: the bytes read while peeking, then the rest. */
  source: Readable;
  /** The source failed (the client went away) while it was read. */
  failed: boolean;
}

/**
 * Reads the start of a multipart body streaming in until the fields in `stopAt` have
 * all been seen (frameworks send chat_id before the file), `limitBytes` were read, or
 * the body ended, and gives the body back whole for relaying. Pacing needs the chat
 * before the upload starts; nothing is buffered past the limit.
 */
export function peekMultipartFields(
  source: Readable,
  boundary: string,
  capture: readonly string[],
  stopAt: readonly string[],
  limitBytes: number,
): Promise<PeekedFields> {
  const scanner = new MultipartNameScanner(boundary, (name) => capture.includes(name));
  const fields: Record<string, string> = {};
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    let ended = false;
    let failed = false;
    const finish = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      const read = Buffer.concat(chunks, size);
      if (ended || failed) {
        resolve({ fields, source: Readable.from(read.length ? [read] : []), failed });
        return;
      }
      source.pause();
      if (read.length) source.unshift(read);
      resolve({ fields, source, failed });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      try {
        for (const part of scanner.push(chunk)) {
          if (typeof part.value === 'string') fields[part.name] = part.value;
        }
      } catch {
        // Malformed: the relay's own scanner refuses it; pacing knows no chat.
        finish();
        return;
      }
      if (stopAt.every((name) => name in fields) || size >= limitBytes) finish();
    };
    const onEnd = () => {
      ended = true;
      finish();
    };
    const onError = () => {
      failed = true;
      finish();
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
  });
}
