import { BROADCAST_FAILURE_REASONS, type BroadcastFailureReason } from '@relaygram/contracts';
import { broadcastView, type BroadcastAction, type BroadcastRecord } from '@relaygram/queue';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, type GatewayAccess } from '../access/request-access';
import { authHook } from '../http/auth-hook';
import { logCall } from '../http/call-log';
import { sendAnswer, type HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { authorize } from '../rest/rest-auth';
import { BROADCAST_NOT_ALLOWED, controlConflict, NO_SUCH_BROADCAST } from './broadcast-answers';
import { answerCall, createHandler, redisFailed } from './broadcast-create';
import { ownBroadcasts } from './broadcast-list';
import { BROADCAST_BODY_LIMIT } from './broadcast-upload';
import {
  broadcastControlConfig,
  broadcastCreateConfig,
  broadcastFailuresConfig,
  broadcastListConfig,
  broadcastShowConfig,
} from './broadcast.docs';

/** The ids broadcasts get (UUIDs); anything else is no broadcast, without asking Redis. */
const BROADCAST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ACTIONS: readonly BroadcastAction[] = ['pause', 'resume', 'cancel'];
const LIST_PAGE = { name: 'limit', fallback: 50, min: 1, max: 200 };
const FAILURES_PAGE = { name: 'limit', fallback: 100, min: 1, max: 1000 };
const OFFSET = { name: 'offset', fallback: 0, min: 0, max: 1_000_000_000 };

type Query = Record<string, string | string[] | undefined>;

/**
 * Broadcasts on the REST plugin's instance (`api.prefix` is where they live): create,
 * list, show, pause, resume, cancel, failures, each with and without `:botId`. The
 * instance is an encapsulated scope of their own: its JSON "parser" hands the body over
 * as a stream, which only the create route reads.
 */
export function registerBroadcastRoutes(api: FastifyInstance, deps: GatewayRouteDeps): void {
  api.addContentTypeParser('application/json', (_request, payload, done) => done(null, payload));
  const onRequest = authHook(authorize(deps, () => undefined));
  const both = (path: string) => [`/broadcasts${path}`, `/:botId/broadcasts${path}`] as const;
  const [plain, withBot] = both('');
  const create = createHandler(deps, (bot, id) => `${api.prefix}/${bot}/broadcasts/${id}`);
  const bodyLimit = BROADCAST_BODY_LIMIT;
  api.post(plain, { onRequest, bodyLimit, config: broadcastCreateConfig(false) }, create);
  api.post(withBot, { onRequest, bodyLimit, config: broadcastCreateConfig(true) }, create);
  api.get(plain, { onRequest, config: broadcastListConfig(false) }, listHandler(deps));
  api.get(withBot, { onRequest, config: broadcastListConfig(true) }, listHandler(deps));
  const [show, showWithBot] = both('/:id');
  api.get(show, { onRequest, config: broadcastShowConfig(false) }, showHandler(deps));
  api.get(showWithBot, { onRequest, config: broadcastShowConfig(true) }, showHandler(deps));
  for (const action of ACTIONS) {
    const [path, pathWithBot] = both(`/:id/${action}`);
    const handler = controlHandler(deps, action);
    api.post(path, { onRequest, config: broadcastControlConfig(action, false) }, handler);
    api.post(pathWithBot, { onRequest, config: broadcastControlConfig(action, true) }, handler);
  }
  const [failures, failuresWithBot] = both('/:id/failures');
  const failed = failuresHandler(deps);
  api.get(failures, { onRequest, config: broadcastFailuresConfig(false) }, failed);
  api.get(failuresWithBot, { onRequest, config: broadcastFailuresConfig(true) }, failed);
}

function listHandler(deps: GatewayRouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const access = accessOf(request);
    const query = request.query as Query;
    const limit = integerParam(query, LIST_PAGE);
    if (typeof limit !== 'number') return sendAnswer(reply, limit);
    const offset = integerParam(query, OFFSET);
    if (typeof offset !== 'number') return sendAnswer(reply, offset);
    let records: BroadcastRecord[];
    try {
      records = await ownBroadcasts(deps.broadcasts, access, offset, limit);
    } catch (error) {
      return redisFailed(deps, access, reply, { error, what: 'broadcasts not listed' });
    }
    const now = Date.now();
    return reply.code(200).send({
      offset,
      limit,
      items: records.map((record) => broadcastView(record, now)),
    });
  };
}

function showHandler(deps: GatewayRouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const access = accessOf(request);
    const own = await ownBroadcast(deps, access, request, reply);
    if (!own) return reply;
    return reply.code(200).send(broadcastView(own));
  };
}

function controlHandler(deps: GatewayRouteDeps, action: BroadcastAction) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const access = accessOf(request);
    if (!deps.broadcastAllowed(access.client.name)) {
      return answerCall(deps, access, reply, BROADCAST_NOT_ALLOWED);
    }
    const own = await ownBroadcast(deps, access, request, reply);
    if (!own) return reply;
    access.method = own.method;
    let after: BroadcastRecord | undefined;
    try {
      const result = await deps.broadcasts.control(own.bot, own.id, action);
      if (!result.ok) {
        const answer =
          result.status === 'missing' ? NO_SUCH_BROADCAST : controlConflict(action, result.status);
        return answerCall(deps, access, reply, answer);
      }
      after = await deps.broadcasts.read(own.bot, own.id);
    } catch (error) {
      return redisFailed(deps, access, reply, { error, what: `broadcast not ${action}d` });
    }
    if (!after) return answerCall(deps, access, reply, NO_SUCH_BROADCAST);
    logCall(deps.logger, false, access, 200);
    return reply.code(200).send(broadcastView(after));
  };
}

function failuresHandler(deps: GatewayRouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const access = accessOf(request);
    const query = request.query as Query;
    const reason = reasonParam(query.reason);
    if (typeof reason !== 'string') return sendAnswer(reply, reason);
    const limit = integerParam(query, FAILURES_PAGE);
    if (typeof limit !== 'number') return sendAnswer(reply, limit);
    const offset = integerParam(query, OFFSET);
    if (typeof offset !== 'number') return sendAnswer(reply, offset);
    const own = await ownBroadcast(deps, access, request, reply);
    if (!own) return reply;
    try {
      const page = await deps.broadcasts.failures(own.bot, own.id, reason, offset, limit);
      return reply.code(200).send({ reason, total: page.total, offset, items: page.items });
    } catch (error) {
      return redisFailed(deps, access, reply, { error, what: 'broadcast failures not read' });
    }
  };
}

/**
 * The broadcast `:id` of the request's bot when the client made it; else the reply is
 * sent (404, or 503) and the answer is undefined. Another client's is not told apart
 * from a missing one.
 */
async function ownBroadcast(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<BroadcastRecord | undefined> {
  const { id } = request.params as { id: string };
  if (!BROADCAST_ID.test(id)) {
    sendAnswer(reply, NO_SUCH_BROADCAST);
    return undefined;
  }
  let record: BroadcastRecord | undefined;
  try {
    record = await deps.broadcasts.read(access.bot.id, id);
  } catch (error) {
    redisFailed(deps, access, reply, { error, what: 'broadcast not read' });
    return undefined;
  }
  if (!record || record.client !== access.client.name) {
    sendAnswer(reply, NO_SUCH_BROADCAST);
    return undefined;
  }
  return record;
}

function reasonParam(value: unknown): BroadcastFailureReason | HttpAnswer {
  const reasons = BROADCAST_FAILURE_REASONS.join(' or ');
  if (value === undefined) return badQuery(`reason is required: ${reasons}`);
  const reason = BROADCAST_FAILURE_REASONS.find((r) => r === value);
  return reason ?? badQuery(`reason must be ${reasons}`);
}

function integerParam(
  query: Query,
  rule: { name: string; fallback: number; min: number; max: number },
): number | HttpAnswer {
  const value = query[rule.name];
  if (value === undefined) return rule.fallback;
  const number = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (number >= rule.min && number <= rule.max) return number;
  const range = rule.max >= OFFSET.max ? `${rule.min} or more` : `from ${rule.min} to ${rule.max}`;
  return badQuery(`${rule.name} must be an integer ${range}`);
}

function badQuery(error: string): HttpAnswer {
  return { status: 400, body: { error } };
}
