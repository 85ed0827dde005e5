import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { REQUEST_ID_HEADER, requestIdFrom, runWithRequestContext } from '@relaygram/observability';

/** Marks requests that arrived on the management listener. */
const MANAGEMENT = Symbol.for('relaygram.managementListener');
const REQUEST_ID = Symbol.for('relaygram.requestId');

type MarkedRequest = IncomingMessage & { [MANAGEMENT]?: boolean; [REQUEST_ID]?: string };
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Paths served only on the management listener (ADMIN_PORT); the public port answers 404. */
export const MANAGEMENT_ONLY_PREFIXES = ['/metrics', '/admin'];

export function isManagementRequest(req: IncomingMessage): boolean {
  return (req as MarkedRequest)[MANAGEMENT] === true;
}

export function isManagementOnlyPath(url: string): boolean {
  for (const prefix of MANAGEMENT_ONLY_PREFIXES) {
    if (!url.startsWith(prefix)) continue;
    const next = url.charCodeAt(prefix.length);
    // The prefix alone, or followed by `/` or `?` (NaN past the end).
    if (Number.isNaN(next) || next === 0x2f || next === 0x3f) return true;
  }
  return false;
}

/** The id given to a request on arrival (Fastify's `genReqId` reuses it). */
export function requestIdOf(req: IncomingMessage): string {
  return (req as MarkedRequest)[REQUEST_ID] ?? requestIdFrom(req.headers);
}

/**
 * Every request is handled inside its own context, entered before Fastify sees it, so
 * any line logged on its behalf (by Nest, a controller or a feature's RELAYGRAM_LOGGER)
 * carries its `req_id`.
 */
function withRequestContext(handler: Handler, management: boolean, context: boolean): Handler {
  return (req, res) => {
    const reqId = requestIdFrom(req.headers);
    const marked = req as MarkedRequest;
    marked[REQUEST_ID] = reqId;
    if (management) marked[MANAGEMENT] = true;
    res.setHeader(REQUEST_ID_HEADER, reqId);
    if (context) runWithRequestContext({ reqId }, () => handler(req, res));
    else handler(req, res);
  };
}

/**
 * Fastify serves one handler; the public and the management listener are two Node
 * servers feeding it, and requests from the management one carry a mark. One Nest app
 * thus answers both ports with the same modules, and a hook turns management-only
 * paths away on the public port.
 */
export class ListenerPair {
  management?: Server;

  constructor(private readonly timeouts: ListenerTimeouts) {}

  readonly serverFactory = (handler: Handler): Server => {
    const context = this.timeouts.requestContext ?? true;
    this.management = this.#create(withRequestContext(handler, true, context));
    return this.#create(withRequestContext(handler, false, context));
  };

  // Fastify applies its own requestTimeout only to a server it creates itself, so the
  // limits that cut off slow clients are set here, on both servers.
  #create(handler: Handler): Server {
    const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs } = this.timeouts;
    const server = createServer(
      {
        requestTimeout: requestTimeoutMs,
        headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
        // Node checks the two limits above on this period (30 s by default).
        connectionsCheckingInterval: Math.max(250, Math.min(5_000, requestTimeoutMs / 4)),
      },
      handler,
    );
    server.keepAliveTimeout = keepAliveTimeoutMs;
    return server;
  }
}

export interface ListenerTimeouts {
  /** A whole request, body included, must arrive within this time. */
  requestTimeoutMs: number;
  /** The request line and headers must arrive within this time. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** Each request in its own AsyncLocalStorage context (AppDefinition.requestContext). */
  requestContext?: boolean;
}
