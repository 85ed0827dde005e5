import type { Readable } from 'node:stream';
import {
  BROADCAST_CHUNK,
  BROADCAST_MAX_RECIPIENTS,
  type BroadcastCall,
} from '@relaygram/contracts';
import type { BroadcastStore } from '@relaygram/queue';
import type { GatewayClient } from '../access/client-directory';
import type { HttpAnswer } from '../http/http-answer';
import { BROADCASTS_UNAVAILABLE, TAKEN_OVER_ANSWER } from './broadcast-answers';
import { BodySyntaxError, BroadcastBodyParser, type BodyEvent } from './broadcast-body-parser';
import {
  badRecipient,
  CALL_FIELDS,
  checkBroadcastMethod,
  checkBroadcastParams,
  completeCall,
  MAX_FIELD_BYTES,
  RECIPIENTS_FIELD,
  recipientOf,
  tooManyRecipients,
} from './broadcast-request';

/** Room for 1,000,000 chat ids in any JSON spelling, and the call's parameters. */
export const BROADCAST_BODY_LIMIT = 32 * 1024 * 1024;

export const BODY_TOO_LARGE: HttpAnswer = Object.freeze({
  status: 413,
  body: { error: `the body is too large: a broadcast body may have ${BROADCAST_BODY_LIMIT} bytes` },
  headers: { connection: 'close' },
});

/** Where the recipients go: a broadcast created `loading`, and who sends it. */
export interface UploadTarget {
  store: BroadcastStore;
  bot: string;
  id: string;
  /** This request's upload token: the store takes its appends only while it is the broadcast's. */
  upload: string;
  client: GatewayClient;
}

export type UploadResult =
  | { ok: true; call: BroadcastCall; total: number }
  /** `redisError`: the answer is a 503 because Redis failed (to be logged). */
  | { ok: false; answer: HttpAnswer; redisError?: unknown };

class StoreFailure extends Error {
  constructor(readonly error: unknown) {
    super('Redis failed');
  }
}

/** The append script's refusal when another request took the broadcast's upload over. */
const TAKEN_OVER = /relaygram broadcast: (not loading|its upload was started afresh)/;

/**
 * Reads a broadcast body as it arrives, its recipients appended to Redis BROADCAST_CHUNK
 * at a time, so what is held is one network chunk and one batch, whatever the list's
 * length. After a refusal the rest of the body is read and dropped (the client gets
 * its answer on a connection that stays usable), up to the body limit.
 */
export async function receiveBroadcast(
  body: Readable,
  target: UploadTarget,
  limit = BROADCAST_BODY_LIMIT,
): Promise<UploadResult> {
  const upload = new Upload(target);
  let bytes = 0;
  let refusal: UploadResult | undefined;
  try {
    // Not destroyed on leaving the loop: that would cut the connection the answer goes on.
    for await (const data of body.iterator({ destroyOnReturn: false })) {
      const chunk = typeof data === 'string' ? Buffer.from(data) : (data as Buffer);
      bytes += chunk.length;
      if (bytes > limit) return closing(refusal) ?? { ok: false, answer: BODY_TOO_LARGE };
      if (!refusal) refusal = await upload.take(chunk);
    }
  } catch (error) {
    if (error instanceof StoreFailure) return storeRefusal(error.error);
    return (
      refusal ?? {
        ok: false,
        answer: { status: 400, body: { error: 'the body did not arrive whole' } },
      }
    );
  }
  if (refusal) return refusal;
  try {
    return await upload.finish();
  } catch (error) {
    if (error instanceof StoreFailure) return storeRefusal(error.error);
    throw error;
  }
}

function closing(refusal: UploadResult | undefined): UploadResult | undefined {
  if (!refusal || refusal.ok) return refusal;
  return { ...refusal, answer: { ...refusal.answer, headers: { connection: 'close' } } };
}

/**
 * An append that failed: Redis is away (503), or the broadcast is no longer this
 * request's to fill (409). Part of the body may be unread: the connection is not kept.
 */
function storeRefusal(error: unknown): UploadResult {
  if (error instanceof Error && TAKEN_OVER.test(error.message)) {
    return { ok: false, answer: { ...TAKEN_OVER_ANSWER, headers: { connection: 'close' } } };
  }
  const headers = { ...BROADCASTS_UNAVAILABLE.headers, connection: 'close' };
  return { ok: false, answer: { ...BROADCASTS_UNAVAILABLE, headers }, redisError: error };
}

/** One body's parser, its call's fields as they come, and the batch not yet in Redis. */
class Upload {
  readonly #parser = new BroadcastBodyParser({
    listField: RECIPIENTS_FIELD,
    fields: CALL_FIELDS,
    maxValueBytes: MAX_FIELD_BYTES,
  });
  #method?: string;
  #params?: Record<string, unknown>;
  #batch: string[] = [];
  #total = 0;

  constructor(private readonly target: UploadTarget) {}

  /** A chunk of the body; the refusal of the first mistake in it. */
  async take(chunk: Buffer): Promise<UploadResult | undefined> {
    let events: BodyEvent[];
    try {
      events = this.#parser.push(chunk);
    } catch (error) {
      return syntaxRefusal(error);
    }
    return this.#apply(events);
  }

  async finish(): Promise<UploadResult> {
    let events: BodyEvent[];
    try {
      events = this.#parser.end();
    } catch (error) {
      return syntaxRefusal(error);
    }
    const refusal = await this.#apply(events);
    if (refusal) return refusal;
    if (this.#batch.length > 0) await this.#flush();
    const call = completeCall(this.#method, this.#params, {
      named: this.#parser.has(RECIPIENTS_FIELD),
      total: this.#total,
    });
    if (!call.ok) return call;
    return { ok: true, call: call.value, total: this.#total };
  }

  async #apply(events: readonly BodyEvent[]): Promise<UploadResult | undefined> {
    for (const event of events) {
      const answer = event.type === 'item' ? this.#item(event) : this.#field(event);
      if (answer) return { ok: false, answer };
      if (this.#batch.length === BROADCAST_CHUNK) await this.#flush();
    }
    return undefined;
  }

  #item(event: Extract<BodyEvent, { type: 'item' }>): HttpAnswer | undefined {
    if (event.index >= BROADCAST_MAX_RECIPIENTS) return tooManyRecipients(event.offset);
    const chatId = recipientOf(event.value);
    if (chatId === undefined) return badRecipient(event.index, event.offset);
    this.#batch.push(chatId);
    return undefined;
  }

  #field(event: Extract<BodyEvent, { type: 'field' }>): HttpAnswer | undefined {
    if (event.field === 'method') {
      const method = checkBroadcastMethod(this.target.client, event.text, event.offset);
      if (!method.ok) return method.answer;
      this.#method = method.value;
    } else {
      const params = checkBroadcastParams(event.text, event.offset);
      if (!params.ok) return params.answer;
      this.#params = params.value;
    }
    return undefined;
  }

  async #flush(): Promise<void> {
    const { store, bot, id, upload } = this.target;
    try {
      this.#total = await store.append(bot, id, upload, this.#batch);
    } catch (error) {
      throw new StoreFailure(error);
    }
    this.#batch = [];
  }
}

function syntaxRefusal(error: unknown): UploadResult {
  if (!(error instanceof BodySyntaxError)) throw error;
  return {
    ok: false,
    answer: { status: 400, body: { error: `the body is not a broadcast: ${error.message}` } },
  };
}
