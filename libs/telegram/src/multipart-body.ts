import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { formFieldValue } from './form-fields';
import {
  RequestBodyFailureError,
  bodyFailureFrom,
  sourceChunks,
  type RequestBodyFailure,
} from './request-body';
import { TelegramRequestError } from './telegram.errors';

export interface MultipartFile {
  field: string;
  filename: string;
  /** application/octet-stream when absent. */
  contentType?: string;
  /** Read once, in order; never destroyed by the client (a failed call stops reading it). */
  stream: Readable;
  /** Byte length when known: lets the request carry a Content-Length; it is enforced. */
  knownLength?: number;
}

export type MultipartFields = Record<string, string | number | boolean | object>;

export interface MultipartBody {
  contentType: string;
  /** Set when every file has a knownLength; the body is chunked otherwise. */
  contentLength?: number;
  stream: Readable;
  /** Why the body itself failed (a file stream error, a wrong knownLength), if it did. */
  failure(): RequestBodyFailure | undefined;
}

const CRLF = Buffer.from('\r\n');
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * A streaming multipart/form-data body: parts are produced one at a time as the
 * socket drains, so a file of any size costs only a chunk or two of memory.
 */
export function createMultipartBody(
  fields: MultipartFields,
  files: readonly MultipartFile[],
): MultipartBody {
  const boundary = `----relaygram${randomBytes(16).toString('hex')}`;
  const fieldParts = Object.entries(fields).flatMap(([name, value]) => {
    const text = formFieldValue(value);
    return text === undefined ? [] : [fieldPart(boundary, name, text)];
  });
  const fileHeads = files.map((file) => fileHead(boundary, file));
  const closing = Buffer.from(`--${boundary}--\r\n`);

  let failure: RequestBodyFailure | undefined;
  const fail = (error: unknown, file: MultipartFile): Error => {
    failure ??= bodyFailureFrom(error, `file field "${quoted(file.field)}"`);
    return new RequestBodyFailureError(failure);
  };

  async function* produce(): AsyncGenerator<Uint8Array> {
    yield* fieldParts;
    for (const [index, file] of files.entries()) {
      yield fileHeads[index];
      let sent = 0;
      for await (const chunk of sourceChunks(file.stream, (error) => fail(error, file))) {
        sent += chunk.length;
        if (file.knownLength !== undefined && sent > file.knownLength) break;
        yield chunk;
      }
      if (file.knownLength !== undefined && sent !== file.knownLength) {
        throw fail(new RequestBodyFailureError(lengthMismatch(file, sent)), file);
      }
      yield CRLF;
    }
    yield closing;
  }

  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: files.every((f) => f.knownLength !== undefined)
      ? byteLength(fieldParts) +
        byteLength(fileHeads) +
        files.reduce((n, f) => n + (f.knownLength ?? 0) + CRLF.length, 0) +
        closing.length
      : undefined,
    stream: Readable.from(produce(), { objectMode: false }),
    failure: () => failure,
  };
}

function fieldPart(boundary: string, name: string, text: string): Buffer {
  return Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${text}\r\n`,
  );
}

function fileHead(boundary: string, file: MultipartFile): Buffer {
  const contentType = file.contentType ?? 'application/octet-stream';
  if (CONTROL_CHARS.test(contentType)) {
    throw new TelegramRequestError('multipart contentType must not contain control characters');
  }
  const { knownLength } = file;
  if (knownLength !== undefined && !(Number.isSafeInteger(knownLength) && knownLength >= 0)) {
    throw new TelegramRequestError('multipart knownLength must be a non-negative integer');
  }
  return Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.field)}"; ` +
      `filename="${quoted(file.filename)}"\r\nContent-Type: ${contentType}\r\n\r\n`,
  );
}

/** Names and filenames inside a quoted header value, escaped the way browsers do. */
function quoted(value: string): string {
  return value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

function lengthMismatch(file: MultipartFile, sent: number): RequestBodyFailure {
  const known = file.knownLength ?? 0;
  return {
    code: 'ELENGTH',
    reason:
      `request body failed: file field "${quoted(file.field)}" ` +
      (sent > known ? `is longer than` : `has ${sent} bytes, not`) +
      ` its knownLength ${known}`,
  };
}

function byteLength(buffers: readonly Buffer[]): number {
  return buffers.reduce((n, b) => n + b.length, 0);
}
