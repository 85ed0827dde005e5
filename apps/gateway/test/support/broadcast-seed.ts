import { randomUUID } from 'node:crypto';
import { BROADCAST_CHUNK, DeadReason, OUTBOX_ROUTE } from '@relaygram/contracts';
import type { BroadcastStore, RecipientResult } from '@relaygram/queue';
import type { QueueFixture } from '@relaygram/queue/testing';
import { expectDocumentedAnswer } from '@relaygram/testing';
import { request } from 'undici';

export const BLOCKED = 'Forbidden: bot was blocked by the user';
export const NOT_FOUND = 'Bad Request: chat not found';

export interface BroadcastSeed {
  bot: string;
  recipients: number;
  /** Settled, in this order, from the first recipient on. */
  sent?: number;
  blocked?: number;
  failed?: number;
  client?: string;
  method?: string;
  /** The first recipient's chat id; the others follow it. */
  firstChat?: number;
  /** When it started (run time counts from there, so the rate is settled / this). */
  startedAgoMs?: number;
}

/**
 * A broadcast as the gateway and a dispatcher leave it: created, loaded, started, and
 * its first recipients claimed and settled as sent, blocked (403) or failed (400).
 * Only for apps that run no dispatcher, which would claim the rest. Its id.
 */
export async function seedBroadcast(store: BroadcastStore, seed: BroadcastSeed): Promise<string> {
  const { bot, recipients, sent = 0, blocked = 0, failed = 0 } = seed;
  const id = randomUUID();
  const upload = randomUUID();
  const startedAt = Date.now() - (seed.startedAgoMs ?? 60_000);
  const client = seed.client ?? 'shop';
  const created = await store.create({ bot, client, id, upload, createdAt: startedAt }, startedAt);
  if (created !== 'created') throw new Error(`broadcast ${id} not created: ${created}`);
  const first = seed.firstChat ?? 1000;
  const chats = Array.from({ length: recipients }, (_, i) => String(first + i));
  for (let i = 0; i < chats.length; i += BROADCAST_CHUNK)
    await store.append(bot, id, upload, chats.slice(i, i + BROADCAST_CHUNK), startedAt);
  const call = { method: seed.method ?? 'sendMessage', params: { text: 'Sale today' } };
  const started = await store.start(bot, id, upload, call, startedAt);
  if (started !== 'running') throw new Error(`broadcast ${id} not started: ${started}`);
  const settled = sent + blocked + failed;
  if (settled === 0) return id;
  const claim = await store.claim(bot, id, settled);
  if (claim.status !== 'running' || claim.recipients.length !== settled)
    throw new Error(`broadcast ${id}: ${settled} recipients not claimed`);
  const results = claim.recipients.map(({ index, chatId }, i): RecipientResult => {
    if (i < sent) return { index, outcome: 'sent' };
    if (i < sent + blocked)
      return { index, outcome: 'blocked', chatId, errorCode: 403, description: BLOCKED };
    return { index, outcome: 'failed', chatId, errorCode: 400, description: NOT_FOUND };
  });
  await store.settle(bot, id, results);
  return id;
}

/**
 * An outbox send Telegram refused, as the dispatcher leaves it: a dead letter of the
 * outbox's route. Only for apps that run no dispatcher. Its id (the dead letter's).
 */
export async function seedOutboxFailure(
  fixture: QueueFixture,
  bot: string,
  chatId: number,
  text: string,
): Promise<string> {
  const id = randomUUID();
  const call = { method: 'sendMessage', params: { chat_id: chatId, text } };
  const queued = await fixture.outbox.enqueue({ bot, client: 'shop', id, call, chatId });
  if (queued !== 'queued') throw new Error(`outbox send ${id} not queued`);
  await fixture.outbox.settle(bot, id, {
    status: 'failed',
    attempts: 1,
    errorCode: 403,
    description: BLOCKED,
  });
  const head = await fixture.driver.finishOne(OUTBOX_ROUTE, () => ({
    kind: 'dead',
    dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 403, lastError: BLOCKED },
  }));
  if (head.entry.deliveryId !== id) throw new Error(`the outbox lane did not start with ${id}`);
  return id;
}

export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One admin API call, its answer held to the management OpenAPI document. */
export async function adminCall(
  method: 'GET' | 'POST',
  url: string,
  token: string | undefined,
): Promise<AdminAnswer> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await request(url, { method, headers });
  const text = await res.body.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  const type = res.headers['content-type'];
  const contentType = typeof type === 'string' ? type : undefined;
  await expectDocumentedAnswer({ method, url, status: res.statusCode, contentType, body });
  return { status: res.statusCode, body };
}
