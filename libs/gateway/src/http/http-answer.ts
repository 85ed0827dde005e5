import type { FastifyReply } from 'fastify';

/** An answer decided by the gateway itself (a refusal, an error, a stored answer). */
export interface HttpAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function sendAnswer(reply: FastifyReply, answer: HttpAnswer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  return reply.code(answer.status).send(answer.body);
}
