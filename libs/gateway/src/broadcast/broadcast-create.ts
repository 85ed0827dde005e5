import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BroadcastStatus } from '@relaygram/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, type GatewayAccess } from '../access/request-access';
import { logCall } from '../http/call-log';
import { sendAnswer, type HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { idempotencyKey, INVALID_KEY, INVALID_KEY_ANSWER } from '../rest/rest-idempotency';
import {
  BROADCAST_NOT_ALLOWED,
  BROADCASTS_UNAVAILABLE,
  STILL_LOADING,
  TAKEN_OVER_ANSWER,
} from './broadcast-answers';
import { broadcastIdOf } from './broadcast-request';
import { BODY_TOO_LARGE, BROADCAST_BODY_LIMIT, receiveBroadcast } from './broadcast-upload';

type LocationOf = (bot: string, id: string) => string;

const NOT_A_BODY: HttpAnswer = Object.freeze({
  status: 400,
  body: {
    error: 'the body must be a JSON object: {"method": ..., "params": {...}, "chat_ids": [...]}',
  },
});

/** Answers a request's refusal or error, with its log line (warn for the gateway's own failures). */
export function answerCall(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  answer: HttpAnswer,
): FastifyReply {
  const body = answer.body as { error?: unknown };
  const problem = typeof body.error === 'string' ? body.error : undefined;
  logCall(deps.logger, answer.status >= 500, access, answer.status, problem);
  return sendAnswer(reply, answer);
}

/** Logs a Redis failure and answers 503 (`answer`: with the connection's fate, mid-body). */
export function redisFailed(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  failure: { error: unknown; what: string; answer?: HttpAnswer },
): FastifyReply {
  deps.logger.warn(
    { err: failure.error, req_id: access.reqId, client: access.client.name, bot: access.bot.id },
    `${failure.what}: Redis failed`,
  );
  return sendAnswer(reply, failure.answer ?? BROADCASTS_UNAVAILABLE);
}

/**
 * `POST /api/v1[/:botId]/broadcasts`: the broadcast is created `loading` before a byte
 * of its body is read, filled with its recipients as they stream in, and started with
 * its call once the body is whole; any refusal on the way discards it. With an
 * Idempotency-Key its id comes from the client, bot and key, so a repeat finds it:
 * started, the repeat gets its id (its own body unread: the first request's wins);
 * still loading, 409.
 */
export function createHandler(deps: GatewayRouteDeps, locationOf: LocationOf) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const key = idempotencyKey(request);
    if (key === INVALID_KEY) return sendAnswer(reply, INVALID_KEY_ANSWER);
    const access = accessOf(request);
    if (!deps.broadcastAllowed(access.client.name)) {
      return answerCall(deps, access, reply, BROADCAST_NOT_ALLOWED);
    }
    const body = request.body;
    if (!(body instanceof Readable)) return answerCall(deps, access, reply, NOT_A_BODY);
    if (Number(request.headers['content-length']) > BROADCAST_BODY_LIMIT) {
      return answerCall(deps, access, reply, BODY_TOO_LARGE);
    }
    const bot = access.bot.id;
    const client = access.client.name;
    const id = key === undefined ? randomUUID() : broadcastIdOf(client, bot, key);
    const uploadToken = randomUUID();
    let created: 'created' | BroadcastStatus;
    try {
      created = await deps.broadcasts.create({ bot, client, id, upload: uploadToken });
    } catch (error) {
      return redisFailed(deps, access, reply, { error, what: 'broadcast not created' });
    }
    if (created !== 'created') {
      // A fresh UUID is never taken; if one were, the caller must not get another's broadcast.
      if (key === undefined) throw new Error('a fresh broadcast id was already taken');
      return repeated(deps, access, reply, { id, status: created }, locationOf);
    }
    return upload(deps, access, reply, { id, body, upload: uploadToken }, locationOf);
  };
}

/** A repeat of an Idempotency-Key: the broadcast it made, or 409 while its upload runs. */
async function repeated(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  found: { id: string; status: BroadcastStatus },
  locationOf: LocationOf,
): Promise<FastifyReply> {
  if (found.status === 'loading') return answerCall(deps, access, reply, STILL_LOADING);
  const bot = access.bot.id;
  let total: number | undefined;
  try {
    total = (await deps.broadcasts.read(bot, found.id))?.total;
  } catch (error) {
    return redisFailed(deps, access, reply, { error, what: 'broadcast not read' });
  }
  // Gone between the two reads (its record expired): a retry creates it anew.
  if (total === undefined) return answerCall(deps, access, reply, STILL_LOADING);
  logCall(deps.logger, false, access, 202);
  return reply
    .code(202)
    .headers({ location: locationOf(bot, found.id), 'idempotent-replayed': 'true' })
    .send({ id: found.id, status: found.status, total });
}

async function upload(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  created: { id: string; body: Readable; upload: string },
  locationOf: LocationOf,
): Promise<FastifyReply> {
  const { id, upload } = created;
  const bot = access.bot.id;
  const store = deps.broadcasts;
  const target = { store, bot, id, upload, client: access.client };
  const result = await receiveBroadcast(created.body, target);
  if (!result.ok) {
    await discard(deps, access, id, upload);
    if ('redisError' in result) {
      const { redisError: error, answer } = result;
      return redisFailed(deps, access, reply, { error, what: 'broadcast not stored', answer });
    }
    return answerCall(deps, access, reply, result.answer);
  }
  // The call's log line names the method of the broadcast.
  access.method = result.call.method;
  let status: BroadcastStatus | 'missing' | 'replaced';
  try {
    status = await store.start(bot, id, upload, result.call);
  } catch (error) {
    await discard(deps, access, id, upload);
    return redisFailed(deps, access, reply, { error, what: 'broadcast not started' });
  }
  if (status === 'replaced') return answerCall(deps, access, reply, TAKEN_OVER_ANSWER);
  // Only the loading TTL (an hour, far above the request timeout) could end it before.
  if (status !== 'running') throw new Error(`broadcast ${id} was ${status} when its body ended`);
  logCall(deps.logger, false, access, 202);
  return reply
    .code(202)
    .header('location', locationOf(bot, id))
    .send({ id, status: 'running', total: result.total });
}

/** A refused upload's recipients go; if Redis fails here too, its loading TTL removes them. */
async function discard(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  id: string,
  upload: string,
): Promise<void> {
  try {
    await deps.broadcasts.discard(access.bot.id, id, upload);
  } catch (error) {
    deps.logger.warn(
      { err: error, req_id: access.reqId, client: access.client.name, bot: access.bot.id },
      'refused broadcast not discarded: Redis failed (its loading TTL removes it)',
    );
  }
}
