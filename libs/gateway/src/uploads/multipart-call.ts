import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { MultipartFields, TelegramClient } from '@relaygram/telegram';
import { UploadGate, UploadRefusedError, UploadTooLargeError } from './upload-gate';

/** Text fields (captions, reply_markup) are small; 1 MB leaves room for any of them. */
const MAX_FIELD_BYTES = 1024 * 1024;
const MAX_FIELDS = 100;

export type PreparedParams =
  { ok: true; params: Record<string, unknown> } | { ok: false; status: number; error: string };

/** The file part as it was announced, before a byte of it is read. */
export interface AnnouncedFile {
  field: string;
  filename: string;
  contentType?: string;
}

/** An answer decided before the upload: sent instead of calling Telegram. */
export interface EarlyAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface MultipartPlan {
  method: string;
  limitBytes: number;
  timeoutMs: number;
  /** Checks the text fields and the file's field name (undefined: no file part). */
  prepare(fields: Record<string, unknown>, fileField: string | undefined): PreparedParams;
  /**
   * Runs once the fields passed `prepare` and before the file goes out (pacing, an
   * idempotency key): an answer here ends the call without reaching Telegram.
   */
  admit?(params: Record<string, unknown>, file: AnnouncedFile): Promise<EarlyAnswer | undefined>;
}

export type MultipartOutcome =
  /** Refused before Telegram acted: answer this. */
  | { kind: 'refused'; status: number; error: string }
  /** `admit` answered: the file was never sent. */
  | { kind: 'answered'; answer: EarlyAnswer }
  /** No file part: an ordinary call, which the caller may retry. */
  | { kind: 'fields-only'; params: Record<string, unknown> }
  | { kind: 'done'; result: unknown }
  /** Telegram (or the way to it) failed; a streamed upload is never retried. */
  | { kind: 'failed'; error: unknown };

type PartIterator = AsyncIterator<Multipart>;

/**
 * A multipart REST call with at most one file, streamed to Telegram as it arrives.
 * Text fields must come before the file: they are checked before a byte goes out, and
 * the outgoing request is completed only once the incoming one ended right after the
 * file, so a late part can still refuse the call.
 */
export async function runMultipartCall(
  request: FastifyRequest,
  client: TelegramClient,
  plan: MultipartPlan,
): Promise<MultipartOutcome> {
  const parts = request
    .parts({
      limits: {
        fileSize: plan.limitBytes + 1,
        fieldSize: MAX_FIELD_BYTES,
        fields: MAX_FIELDS,
        parts: MAX_FIELDS + 1,
      },
      throwFileSizeLimit: false,
    } as Parameters<FastifyRequest['parts']>[0])
    [Symbol.asyncIterator]();

  const read = await readFields(parts);
  if ('kind' in read) return read;
  const { fields, file } = read;
  const prepared = plan.prepare({ ...fields }, file?.fieldname);
  if (!prepared.ok) {
    if (file) file.file.resume();
    drain(parts);
    return refused(prepared.status, prepared.error);
  }
  if (!file) return { kind: 'fields-only', params: prepared.params };
  const announced: AnnouncedFile = {
    field: file.fieldname,
    filename: file.filename || file.fieldname,
    contentType: file.mimetype || undefined,
  };
  if (plan.admit) {
    let early: EarlyAnswer | undefined;
    try {
      early = await plan.admit(prepared.params, announced);
    } catch (error) {
      file.file.resume();
      drain(parts);
      throw error;
    }
    if (early) {
      file.file.resume();
      drain(parts);
      return { kind: 'answered', answer: early };
    }
  }
  return streamFile(client, plan, parts, prepared.params, { ...announced, part: file });
}

/** The text fields up to the file part (or the end); a refusal if they are not acceptable. */
async function readFields(
  parts: PartIterator,
): Promise<MultipartOutcome | { fields: Record<string, unknown>; file?: MultipartFile }> {
  const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  try {
    for (;;) {
      const step = await parts.next();
      if (step.done) return { fields };
      const part = step.value;
      if (part.type === 'file') return { fields, file: part };
      if (part.valueTruncated) {
        drain(parts);
        return refused(413, `field "${part.fieldname}" is larger than ${MAX_FIELD_BYTES} bytes`);
      }
      if (Object.hasOwn(fields, part.fieldname)) {
        drain(parts);
        return refused(400, `field "${part.fieldname}" is given twice`);
      }
      fields[part.fieldname] = part.value;
    }
  } catch (error) {
    drain(parts);
    return multipartFailure(error);
  }
}

/**
 * Streams the file to Telegram through an upload gate that holds the request's end
 * until the incoming body has ended: a part after the file refuses the call.
 */
async function streamFile(
  client: TelegramClient,
  plan: MultipartPlan,
  parts: PartIterator,
  params: Record<string, unknown>,
  upload: AnnouncedFile & { part: MultipartFile },
): Promise<MultipartOutcome> {
  const gate = new UploadGate(upload.part.file, { limitBytes: plan.limitBytes, holdEnd: true });
  const call = client
    .callMultipart(
      plan.method,
      multipartFields(params),
      [
        {
          field: upload.field,
          filename: upload.filename,
          contentType: upload.contentType,
          stream: gate.stream,
        },
      ],
      { timeoutMs: plan.timeoutMs },
    )
    .then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );

  const first = await Promise.race([gate.sourceDone, call]);
  if (first === 'ended') {
    const late = await lateParts(parts, gate, call);
    if (late) return late;
  }
  const settled = await call;
  if (!settled.ok) {
    gate.refuse();
    drain(parts);
    if (gate.tooLarge) return refused(413, `the file is larger than ${plan.limitBytes} bytes`);
    return { kind: 'failed', error: settled.error };
  }
  return { kind: 'done', result: settled.result };
}

/** After the file: the body must end here, else the call is refused before it completes. */
async function lateParts(
  parts: PartIterator,
  gate: UploadGate,
  call: Promise<unknown>,
): Promise<MultipartOutcome | undefined> {
  let next: IteratorResult<Multipart>;
  try {
    next = await parts.next();
  } catch (error) {
    gate.refuse();
    await call;
    drain(parts);
    return multipartFailure(error);
  }
  if (!next.done) {
    gate.refuse();
    if (next.value.type === 'file') next.value.file.resume();
    await call;
    drain(parts);
    return refused(400, 'the file must be the last part, and there may be only one file');
  }
  gate.release();
  return undefined;
}

function refused(status: number, error: string): MultipartOutcome {
  return { kind: 'refused', status, error };
}

function multipartFailure(error: unknown): MultipartOutcome {
  if (error instanceof UploadTooLargeError) return refused(413, error.message);
  if (error instanceof UploadRefusedError) return refused(400, error.message);
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return refused(413, `too many parts: at most ${MAX_FIELDS} fields and one file`);
    case 'FST_PROTO_VIOLATION':
      return refused(400, 'a field name is not allowed');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return refused(400, 'a field sent as application/json is not valid JSON');
    default:
      return refused(400, 'the multipart body could not be read');
  }
}

/** Bot API parameters as multipart text fields; absent values are left out. */
function multipartFields(params: Record<string, unknown>): MultipartFields {
  const fields: MultipartFields = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      fields[name] = value;
    } else if (typeof value === 'object') {
      fields[name] = value;
    }
  }
  return fields;
}

/**
 * Reads whatever the client still sends and throws it away, so the connection stays
 * usable and the client gets the answer instead of a reset.
 */
function drain(parts: PartIterator): void {
  void (async () => {
    try {
      for (;;) {
        const step = await parts.next();
        if (step.done) return;
        if (step.value.type === 'file') step.value.file.resume();
      }
    } catch {
      // The client went away or sent garbage: nothing left to answer.
    }
  })();
}
