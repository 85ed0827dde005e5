import type { FastifyReply, FastifyRequest } from 'fastify';
import { readWhole } from '@relaygram/telegram';
import { checkAccess } from '../access/access-check';
import { accessOf, grantAccess, headerValue } from '../access/request-access';
import { callerSignal } from '../http/caller-signal';
import { sendAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import type { DropInAnswer } from '../telegram/telegram-error.mapper';
import { bodyKind } from './body-kind';
import { AMBIGUOUS_BODY, MALFORMED_MULTIPART, TOO_LARGE } from './drop-in-answers';
import { checkBody, MAX_BUFFERED_BODY, queryParams } from './drop-in-body';
import { loggedPath } from './drop-in-path';
import { logDropInCall, refuse } from './drop-in-relay';
import { peekMultipartFields } from './multipart-peek';

/** getUpdates' parameters are few and short; aiogram sends them as multipart. */
const PULL_PARAMS = ['offset', 'limit', 'timeout', 'allowed_updates', 'drop_pending_updates'];
const NO_FIELD = ['\0'];

/**
 * getUpdates, deleteWebhook and getWebhookInfo of a client that owns a pull route of
 * the bot: granted whatever its `methods` list says (they touch only its own lane).
 * False for every other caller, whose call then goes through the ordinary checks (the
 * reserved-method 403 for getUpdates and deleteWebhook).
 */
export function pullAccess(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  token: string | undefined,
  numericId: string,
  method: string,
): boolean {
  const decision = checkAccess(deps.telegram.directory, {
    token,
    bot: { by: 'numeric-id', numericId },
    method: undefined,
  });
  if (!decision.ok || (request.method !== 'GET' && request.method !== 'POST')) return false;
  const route = deps.pull.routeFor(decision.client.name, decision.bot.id);
  const telegram = route ? deps.telegram.client(decision.bot.id) : undefined;
  if (!route || !telegram) return false;
  grantAccess(request, {
    client: decision.client,
    bot: decision.bot,
    telegram,
    method,
    loggedPath: loggedPath(numericId, method),
    pull: route,
  });
  return true;
}

/**
 * A pull route's getUpdates, deleteWebhook or getWebhookInfo: its parameters from the
 * query and the body (JSON, form or multipart, the body winning as with Telegram),
 * answered from the lane.
 */
export async function answerPull(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  query: string,
): Promise<FastifyReply> {
  const access = accessOf(request);
  let params: Record<string, unknown> = queryParams(query);
  if (request.method === 'POST') {
    const body = await pullBodyParams(request);
    if ('status' in body) return refuse(deps, request, reply, body);
    params = { ...params, ...body.params };
  }
  const answer = await deps.pull.answer(
    access.method,
    access.pull as NonNullable<typeof access.pull>,
    access.bot.id,
    params,
    callerSignal(reply),
  );
  // The caller hung up while its getUpdates waited: nobody reads an answer.
  if (!answer) return reply;
  logDropInCall(deps, request, answer.status);
  if (Buffer.isBuffer(answer.body))
    return reply.code(answer.status).type('application/json').send(answer.body);
  return sendAnswer(reply, answer);
}

async function pullBodyParams(
  request: FastifyRequest,
): Promise<DropInAnswer | { params: Record<string, unknown> }> {
  const kind = bodyKind(headerValue(request, 'content-type'));
  if (kind.kind === 'ambiguous') return AMBIGUOUS_BODY;
  if (kind.kind === 'multipart') {
    const peeked = await peekMultipartFields(
      request.raw,
      kind.boundary,
      PULL_PARAMS,
      NO_FIELD,
      MAX_BUFFERED_BODY,
    );
    if (peeked.failed) return MALFORMED_MULTIPART;
    peeked.source.resume();
    return { params: peeked.fields };
  }
  const body = await readWhole(request.raw, MAX_BUFFERED_BODY, 'drain');
  if (!body) return TOO_LARGE;
  if (kind.kind !== 'json' && kind.kind !== 'form') return { params: {} };
  const checked = checkBody(kind.kind, body, accessOf(request).method);
  return checked.refusal ?? { params: checked.params };
}
