import { Catch, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/**
 * Nest answers an unknown route with `Cannot GET /the/path`, echoing the path back. A
 * path can carry a token (a mistyped drop-in URL), so unknown routes get a fixed body;
 * other 404s (an unknown dead letter, say) keep the message their handler chose.
 */
@Catch(NotFoundException)
export class RouteNotFoundFilter implements ExceptionFilter<NotFoundException> {
  catch(exception: NotFoundException, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const body = exception.getResponse();
    const message =
      typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : body;
    if (typeof message === 'string' && /^Cannot [A-Z]+ /.test(message)) {
      void reply.code(404).send({ statusCode: 404, error: 'Not Found', message: 'no such route' });
      return;
    }
    // A handler that set its own Content-Type (a script, a page) before it threw would make
    // Fastify refuse this JSON body and answer 500.
    void reply.code(404).type('application/json; charset=utf-8').send(body);
  }
}
