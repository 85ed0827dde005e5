import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { installAccessLog } from './access-log';
import {
  isManagementOnlyPath,
  isManagementRequest,
  ListenerPair,
  requestIdOf,
} from './management-listener';

/** Bodies above this are refused with 413 (a webhook update is far smaller). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** A whole request must arrive within this (see ListenerPair). */
export const REQUEST_TIMEOUT_MS = 120_000;
const HEADERS_TIMEOUT_MS = 30_000;
/**
 * On shutdown, requests in flight get this long to finish before their connections are
 * cut; well inside SHUTDOWN_GRACE_MS, so Redis and the log close cleanly after.
 */
export const HTTP_DRAIN_MS = 10_000;
// Above the 60 s idle timeout of common load balancers, so they close first.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The Fastify adapter over the public and the management listener, with the limits
 * every Relaygram process applies to its clients.
 */
export function createHttpAdapter(
  requestTimeoutMs = REQUEST_TIMEOUT_MS,
  requestContext = true,
): {
  adapter: FastifyAdapter;
  listeners: ListenerPair;
} {
  // A client that stalls (slow headers, a trickling body) is cut off rather than holding
  // a socket; the limit leaves a 50 MB upload room at about 0.5 MB/s.
  const listeners = new ListenerPair({
    requestTimeoutMs,
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    requestContext,
  });
  const adapter = new FastifyAdapter({
    serverFactory: listeners.serverFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify's access log would print raw URLs (drop-in paths carry client tokens).
    logger: false,
    genReqId: requestIdOf,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // No Nest middleware is used anywhere: middie's hook would run for every request
    // and do nothing.
    skipMiddie: true,
  });
  return { adapter, listeners };
}

/**
 * Management-only paths answer 404 on the public port, unknown paths answer 404 before
 * their body is read, and every answered request gets its access log line.
 */
export function installRequestHooks(app: NestFastifyApplication, logger: Logger): void {
  const fastify = app.getHttpAdapter().getInstance();
  // A callback hook, not an async one: it runs for every request, and a promise per
  // request per hook is measurable on the gateway's hot path.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!isManagementRequest(request.raw) && isManagementOnlyPath(request.url)) {
      void reply.code(404).send({ error: 'not found' });
      return;
    }
    if (request.is404) {
      // An unknown path is answered 404 whatever it carries: its body is never parsed,
      // so a malformed one cannot turn the answer into a 400 (Node discards it).
      delete request.headers['content-type'];
      delete request.headers['content-length'];
      delete request.headers['transfer-encoding'];
    }
    done();
  });
  installAccessLog(fastify, logger);
}
