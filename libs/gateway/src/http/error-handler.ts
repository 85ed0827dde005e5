import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { sendAnswer, type HttpAnswer } from './http-answer';

/** The error answers of one plugin, each in its own style (REST's or Telegram's). */
export interface ErrorAnswers {
  tooLarge: HttpAnswer;
  /** A Content-Type the plugin parses no body of; without it, an ordinary 4xx. */
  unsupportedType?: HttpAnswer;
  badRequest(status: number, error: FastifyError): HttpAnswer;
  internal: HttpAnswer;
}

/**
 * The error handler of a gateway plugin: a body too large or of the wrong type, a bad
 * request, and anything else logged with its stack and answered 500.
 */
export function gatewayErrorHandler(logger: Logger, message: string, answers: ErrorAnswers) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? httpExceptionStatus(error) ?? 500;
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
      return sendAnswer(reply, answers.tooLarge);
    }
    if (
      answers.unsupportedType &&
      (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415)
    ) {
      return sendAnswer(reply, answers.unsupportedType);
    }
    if (status >= 400 && status < 500) return sendAnswer(reply, answers.badRequest(status, error));
    logger.error({ err: error, req_id: request.id }, message);
    return sendAnswer(reply, answers.internal);
  };
}

/**
 * A path under /api/v1 that no REST route has gets its body parsed by Nest's own parsers
 * before the 404, and those throw Nest's HttpException (`getStatus()`, no `statusCode`).
 */
function httpExceptionStatus(error: unknown): number | undefined {
  const getStatus = (error as { getStatus?: unknown }).getStatus;
  if (typeof getStatus !== 'function') return undefined;
  const status: unknown = getStatus.call(error);
  return typeof status === 'number' ? status : undefined;
}
