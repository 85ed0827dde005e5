import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { logUrl } from '@relaygram/observability';
import { isManagementRequest } from './management-listener';

/** Probes and scrapes come every few seconds and say nothing new: they are not logged. */
const QUIET_PATHS = ['/healthz', '/health/', '/metrics'];

function isQuiet(url: string): boolean {
  const path = url.split('?', 1)[0];
  return QUIET_PATHS.some((quiet) =>
    quiet.endsWith('/') ? path.startsWith(quiet) : path === quiet,
  );
}

/**
 * One line per answered request, with its id, the URL with any drop-in token masked
 * and the query's values left out, the status and the time taken. Fastify's own request logging stays off: it prints
 * raw URLs.
 *
 * Answers below 400 are logged at debug: the hot paths write their own line (an update
 * received, a delivery's outcome) and count in /metrics, and a second line per webhook
 * cost the ingress about a sixth of its throughput. Refusals (4xx) stay at info,
 * failures (5xx) at warn.
 */
export function installAccessLog(fastify: FastifyInstance, logger: Logger): void {
  // A callback hook that asks the level first: at info, an answered call costs nothing here.
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const level = status >= 500 ? 'warn' : status >= 400 ? 'info' : 'debug';
    if (!logger.isLevelEnabled(level) || isQuiet(request.url)) {
      done();
      return;
    }
    logger[level](
      {
        req_id: request.id,
        method: request.method,
        url: logUrl(request.url),
        status,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        listener: isManagementRequest(request.raw) ? 'management' : 'public',
      },
      'request',
    );
    done();
  });
}
