import { createHash, randomUUID } from 'node:crypto';
import type { OutboxCall } from '@relaygram/contracts';
import { outboxSendView, type OutboxRecord } from '@relaygram/queue';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, type GatewayAccess } from '../access/request-access';
import { authHook } from '../http/auth-hook';
import { logCall } from '../http/call-log';
import { sendAnswer, type HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { requestFingerprint } from '../idempotency/idempotency-store';
import { authorize } from '../rest/rest-auth';
import type { CallAnswer } from '../rest/rest-call';
import {
  answerOnce,
  idempotencyKey,
  INVALID_KEY,
  INVALID_KEY_ANSWER,
} from '../rest/rest-idempotency';
import { checkOutboxRequest, laneChat, type OutboxRequest } from './outbox-request';
import { outboxReadConfig, outboxSendConfig } from './outbox.docs';

/** What an Idempotency-Key's fingerprint names as the path: no REST row has it. */
const OUTBOX_PATH = 'outbox';
/** The ids the outbox makes (randomUUID); anything else is no send, without asking Redis. */
const OUTBOX_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Another client's send answers as a missing one: ids are not to be probed. */
const NO_SUCH_SEND: HttpAnswer = Object.freeze({
  status: 404,
  body: { error: 'no outbox send with this id' },
});
/**
 * A claimed key's lease: handing a send over is one Redis script, so a gateway that died
 * holding the key frees it in seconds, not after the longest Telegram call's time (a
 * retry meanwhile answers 409, and the chat's next sends wait behind it).
 */
const OUTBOX_KEY_LEASE_MS = 10_000;
const ASYNC_APPLIED = Object.freeze({ 'preference-applied': 'respond-async' });
const OUTBOX_UNAVAILABLE: HttpAnswer = Object.freeze({
  status: 503,
  body: { error: 'the outbox needs Redis, which does not answer; retry later' },
  headers: { 'retry-after': '1' },
});

/**
 * `POST /api/v1[/:botId]/outbox` and `GET /api/v1[/:botId]/outbox/:id` on the REST
 * plugin's instance (`api.prefix` is where they live). The method is in the body, so
 * the auth hook checks the token and the bot, and the handler the method.
 */
export function registerOutboxRoutes(api: FastifyInstance, deps: GatewayRouteDeps): void {
  const onRequest = authHook(authorize(deps, () => undefined));
  const send = sendHandler(deps, (bot, id) => `${api.prefix}/${bot}/outbox/${id}`);
  api.post('/outbox', { onRequest, config: outboxSendConfig(false) }, send);
  api.post('/:botId/outbox', { onRequest, config: outboxSendConfig(true) }, send);
  const read = readHandler(deps);
  api.get('/outbox/:id', { onRequest, config: outboxReadConfig(false) }, read);
  api.get('/:botId/outbox/:id', { onRequest, config: outboxReadConfig(true) }, read);
}

function sendHandler(deps: GatewayRouteDeps, locationOf: (bot: string, id: string) => string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const key = idempotencyKey(request);
    if (key === INVALID_KEY) return sendAnswer(reply, INVALID_KEY_ANSWER);
    const access = accessOf(request);
    const checked = checkOutboxRequest(access.client, request.body);
    if (!checked.ok) return sendAnswer(reply, checked.answer);
    // The call's log line names the method of the send.
    access.method = checked.call.method;
    return handOver(deps, access, reply, key, checked, locationOf);
  };
}

/**
 * A REST call sent with `Prefer: respond-async` (RFC 7240): its method and parameters
 * go to the outbox as if posted there, answered 202 with `Preference-Applied`. The
 * parameters need a `chat_id`, which names the send's lane.
 */
export function handOverCall(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  key: string | undefined,
  call: OutboxCall,
  locationOf: (bot: string, id: string) => string,
): Promise<FastifyReply> | FastifyReply {
  const chatId = laneChat(call.params.chat_id);
  if (chatId === undefined) {
    return sendAnswer(reply, {
      status: 400,
      body: {
        error:
          call.params.chat_id === undefined
            ? 'Prefer: respond-async needs chat_id: the outbox sends in order per chat'
            : 'chat_id must be an integer, a numeric string or an @channelusername',
      },
    });
  }
  return handOver(deps, access, reply, key, { call, chatId }, locationOf, ASYNC_APPLIED);
}

/** `Prefer: respond-async` among the request's preferences. */
export function prefersAsync(request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  if (prefer === undefined) return false;
  const values = Array.isArray(prefer) ? prefer : [prefer];
  return values.some((value) =>
    value
      .split(',')
      .some((token) => token.trim().toLowerCase().split(';')[0].trim() === 'respond-async'),
  );
}

function handOver(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  key: string | undefined,
  send: OutboxRequest,
  locationOf: (bot: string, id: string) => string,
  headers: Record<string, string> = {},
): Promise<FastifyReply> {
  // The same fingerprint either way: a key used on the outbox and again with Prefer is one send.
  return answerOnce(
    deps,
    access,
    reply,
    key,
    () => requestFingerprint(OUTBOX_PATH, send.call),
    () => enqueue(deps, access, send, key, locationOf, headers),
    OUTBOX_KEY_LEASE_MS,
  );
}

/**
 * The send made durable under a new id. The 202 is final once the send is in Redis
 * (`reachedTelegram` is what makes answerOnce keep an answer for the key): a repeat
 * of the key gets the same id, never a second send. With a key the id comes from the
 * client, bot and key, so a repeat after a lost reply (the key given back, the send
 * queued) finds its send there and gets its id, instead of queueing it twice.
 */
async function enqueue(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  send: OutboxRequest,
  key: string | undefined,
  locationOf: (bot: string, id: string) => string,
  headers: Record<string, string> = {},
): Promise<CallAnswer> {
  const bot = access.bot.id;
  const id = key === undefined ? randomUUID() : outboxIdOf(access.client.name, bot, key);
  let outcome: 'queued' | 'exists';
  try {
    outcome = await deps.outbox.enqueue({
      bot,
      client: access.client.name,
      id,
      call: send.call,
      chatId: send.chatId,
    });
  } catch (error) {
    // A reply lost after the script ran leaves the send queued though the caller is
    // told to retry: without an Idempotency-Key, that retry is a second send.
    deps.logger.warn(
      { err: error, req_id: access.reqId, client: access.client.name, bot },
      'outbox send not queued: Redis failed',
    );
    return { ...OUTBOX_UNAVAILABLE, reachedTelegram: false };
  }
  // A fresh UUID is never taken; if one were, the caller must not be handed another's send.
  if (outcome === 'exists' && key === undefined) {
    throw new Error('a fresh outbox id was already taken');
  }
  logCall(deps.logger, false, access, 202);
  return {
    status: 202,
    body: { id, status: 'queued' },
    headers: { ...headers, location: locationOf(bot, id) },
    reachedTelegram: true,
  };
}

/** A UUID-shaped id from the client, bot and Idempotency-Key (SHA-256, RFC 4122 variant bits). */
function outboxIdOf(client: string, bot: string, key: string): string {
  const hex = createHash('sha256').update(`${client}\n${bot}\n${key}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function readHandler(deps: GatewayRouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const { id } = request.params as { id: string };
    if (!OUTBOX_ID.test(id)) return sendAnswer(reply, NO_SUCH_SEND);
    const access = accessOf(request);
    let record: OutboxRecord | undefined;
    try {
      record = await deps.outbox.read(access.bot.id, id);
    } catch (error) {
      deps.logger.warn(
        { err: error, req_id: access.reqId, client: access.client.name, bot: access.bot.id },
        'outbox send not read: Redis failed',
      );
      return sendAnswer(reply, OUTBOX_UNAVAILABLE);
    }
    if (!record || record.client !== access.client.name) return sendAnswer(reply, NO_SUCH_SEND);
    return reply.code(200).send(outboxSendView(record));
  };
}
