import {
  Catch,
  HttpException,
  Inject,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';

function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    /enableOfflineQueue|Connection is closed|ECONNREFUSED|ETIMEDOUT/.test(error.message)
  );
}

/**
 * Admin API errors as `{"error": "..."}`: HTTP errors as thrown, Redis away as 503, and
 * anything else as 500 with the details in the log only.
 */
@Catch()
export class AdminErrorFilter implements ExceptionFilter {
  constructor(@Inject(RELAYGRAM_LOGGER) private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (error instanceof HttpException) {
      const body = error.getResponse();
      void reply
        .status(error.getStatus())
        .send(typeof body === 'string' ? { error: body } : normalize(body));
      return;
    }
    if (isRedisUnavailable(error)) {
      void reply.status(503).send({ error: 'Redis does not answer' });
      return;
    }
    this.logger.error({ err: error }, 'admin API call failed');
    void reply.status(500).send({ error: 'internal error' });
  }
}

/** Nest's own errors (`{ message, error, statusCode }`) in the admin API's shape. */
function normalize(body: object): object {
  if ('error' in body && !('statusCode' in body)) return body;
  const { message } = body as { message?: unknown };
  return { error: typeof message === 'string' ? message : 'request failed' };
}
