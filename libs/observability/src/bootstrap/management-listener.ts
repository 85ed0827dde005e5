import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** Marks requests that arrived on the management listener. */
const MANAGEMENT = Symbol.for('relaygram.managementListener');

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Paths served only on the management listener (ADMIN_PORT); the public port answers 404. */
export const MANAGEMENT_ONLY_PREFIXES = ['/metrics', '/admin'];

export function isManagementRequest(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [MANAGEMENT]?: boolean })[MANAGEMENT] === true;
}

export function isManagementOnlyPath(url: string): boolean {
  return MANAGEMENT_ONLY_PREFIXES.some(
    (prefix) => url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`),
  );
}

/**
 * Fastify serves one handler; the public and the management listener are two Node
 * servers feeding it, and requests from the management one carry a mark. One Nest app
 * thus answers both ports with the same modules, and a hook turns management-only
 * paths away on the public port.
 */
export class ListenerPair {
  management?: Server;

  readonly serverFactory = (handler: Handler): Server => {
    this.management = createServer((req, res) => {
      (req as IncomingMessage & { [MANAGEMENT]?: boolean })[MANAGEMENT] = true;
      handler(req, res);
    });
    return createServer(handler);
  };
}
