import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { sendAnswer, type HttpAnswer } from './http-answer';

/**
 * Access is decided in `onRequest`, before a byte of the body is read: `decide` grants
 * the request its access (grantAccess) and returns nothing, or returns the refusal.
 */
export function authHook(
  decide: (request: FastifyRequest) => HttpAnswer | undefined,
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const refusal = decide(request);
    if (refusal) await sendAnswer(reply, refusal);
  };
}
