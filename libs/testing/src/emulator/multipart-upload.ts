import type { MultipartFile } from '@fastify/multipart';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { FileStore } from './file-store';
import { badRequest } from './telegram-error';
import { UploadedFile } from './uploaded-file';

/** Text fields such as a long caption or a big reply_markup stay well under this. */
const MAX_FIELD_BYTES = 8 * 1024 * 1024;

export interface MultipartParams {
  fields: Record<string, unknown>;
  uploads: UploadedFile[];
  /** A file part went past `fileLimit`: the answer is 413 whatever the method. */
  tooLarge: boolean;
}

/**
 * Reads a multipart body part by part, in whatever order the client sent them. Files are
 * streamed to the emulator's temporary directory while their size and SHA-256 are computed,
 * so memory does not depend on upload sizes. A file past `fileLimit` is read to its end and
 * thrown away, so the client still gets a proper 413 instead of a broken connection.
 */
export async function readMultipart(
  request: FastifyRequest,
  files: FileStore,
  fileLimit: number,
): Promise<MultipartParams> {
  const result: MultipartParams = { fields: {}, uploads: [], tooLarge: false };
  try {
    const parts = request.parts({
      limits: { fileSize: fileLimit + 1, fieldSize: MAX_FIELD_BYTES },
    });
    for await (const part of parts) {
      if (part.type === 'field') {
        result.fields[part.fieldname] = String(part.value);
        continue;
      }
      const upload = await streamFile(part, files, fileLimit);
      if (upload) {
        result.uploads.push(upload);
        result.fields[part.fieldname] = upload;
      } else {
        result.tooLarge = true;
      }
    }
  } catch (error) {
    await Promise.all(result.uploads.map((upload) => upload.discardUnlessAdopted()));
    throw asClientError(error);
  }
  return result;
}

/**
 * A body busboy cannot parse (no boundary, a broken part header, cut short) is the
 * client's fault: Telegram answers 400 for it, not 500. Errors of our own file system
 * (they carry a `syscall`) and errors that already have a status stay as they are.
 */
function asClientError(error: unknown): unknown {
  if (!(error instanceof Error) || 'statusCode' in error || 'syscall' in error) return error;
  return badRequest(`can't parse multipart/form-data body: ${error.message}`);
}

async function streamFile(
  part: MultipartFile,
  files: FileStore,
  limit: number,
): Promise<UploadedFile | undefined> {
  const path = await files.tempPath();
  const out = createWriteStream(path);
  const hash = createHash('sha256');
  let size = 0;
  let exceeded = false;
  try {
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (exceeded || size > limit) {
        exceeded = true;
        continue;
      }
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } catch (error) {
    // A write still in flight fails once the stream is destroyed (the client dropped the
    // upload mid-file); without a listener that error would be uncaught.
    out.on('error', () => undefined);
    out.destroy();
    await unlink(path).catch(() => undefined);
    throw error;
  }
  out.end();
  await finished(out);
  if (exceeded || part.file.truncated) {
    await unlink(path).catch(() => undefined);
    return undefined;
  }
  return new UploadedFile(
    part.fieldname,
    part.filename || part.fieldname,
    part.mimetype || 'application/octet-stream',
    size,
    hash.digest('hex'),
    path,
  );
}
