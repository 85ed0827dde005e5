import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';

export interface GeneratedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  /** Bytes to put first (a PNG header...); the rest is a generated pattern. */
  head?: Buffer;
}

export interface StreamedMultipart {
  contentType: string;
  body: Readable;
  /** SHA-256 of the file bytes, known once the body was read to its end. */
  sha256(): string;
}

const CHUNK = 64 * 1024;

/**
 * A multipart body produced as it is read, so a test can send a file of any size
 * without holding it: text fields, the file, then `after` fields. `pause(sent)` is
 * awaited before each file chunk, so a test can hold the upload half-way.
 */
export function streamedMultipart(
  fields: Record<string, string>,
  file: GeneratedFile,
  options: { after?: Record<string, string>; pause?: (sentBytes: number) => Promise<void> } = {},
): StreamedMultipart {
  const boundary = `----gatewaytest${Math.random().toString(16).slice(2)}`;
  const hash = createHash('sha256');
  let digest: string | undefined;
  const fieldPart = (name: string, value: string) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    );
  async function* produce(): AsyncGenerator<Buffer> {
    for (const [name, value] of Object.entries(fields)) yield fieldPart(name, value);
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\n` +
        `Content-Type: ${file.contentType}\r\n\r\n`,
    );
    const pattern = Buffer.alloc(CHUNK);
    for (let i = 0; i < CHUNK; i++) pattern[i] = (i * 31 + 7) & 0xff;
    let sent = 0;
    if (file.head) {
      hash.update(file.head);
      sent += file.head.length;
      yield file.head;
    }
    while (sent < file.size) {
      await options.pause?.(sent);
      const chunk = pattern.subarray(0, Math.min(CHUNK, file.size - sent));
      hash.update(chunk);
      sent += chunk.length;
      yield Buffer.from(chunk);
    }
    digest = hash.digest('hex');
    yield Buffer.from('\r\n');
    for (const [name, value] of Object.entries(options.after ?? {})) yield fieldPart(name, value);
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Readable.from(produce(), { objectMode: false }),
    sha256: () => {
      if (!digest) throw new Error('the body was not read to its end');
      return digest;
    },
  };
}
