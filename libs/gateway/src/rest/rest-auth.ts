import type { FastifyRequest } from 'fastify';
import { checkAccess, type BotSelector } from '../access/access-check';
import { grantAccess, headerValue } from '../access/request-access';
import type { HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { restDenial } from './rest-answers';

export interface RestRouteParams {
  botId?: string;
  method?: string;
}

/**
 * Token, bot and method are checked before a byte of the body is read. `methodOf`
 * answers undefined for a route whose method is not in its path (the outbox's is in
 * its body, checked by the handler; the access names no method until then).
 */
export function authorize(
  deps: GatewayRouteDeps,
  methodOf: (params: RestRouteParams) => string | undefined,
) {
  return (request: FastifyRequest): HttpAnswer | undefined => {
    const params = request.params as RestRouteParams;
    const method = methodOf(params);
    const bot: BotSelector =
      params.botId === undefined ? { by: 'default' } : { by: 'id', id: params.botId };
    const decision = checkAccess(deps.telegram.directory, {
      token: headerValue(request, 'x-service-token'),
      bot,
      method,
    });
    if (!decision.ok) return restDenial(decision);
    const telegram = deps.telegram.client(decision.bot.id);
    // The bot was removed by a reload between the two lookups.
    if (!telegram) return restDenial({ ok: false, reason: 'unknown-bot', botId: decision.bot.id });
    grantAccess(request, {
      client: decision.client,
      bot: decision.bot,
      telegram,
      method: method ?? '',
    });
    return undefined;
  };
}
