import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** What every log line written while serving one HTTP request carries. */
export interface RequestContext {
  /** `req_id` in log lines and the `X-Request-Id` response header. */
  readonly reqId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const REQUEST_ID_HEADER = 'x-request-id';

// A proxy's id is kept so one request can be followed across hops; anything else
// (too long, odd characters that could forge log fields) is replaced.
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(headers: IncomingHttpHeaders): string {
  const given = headers[REQUEST_ID_HEADER];
  const value = Array.isArray(given) ? given[0] : given;
  return value && ACCEPTED_REQUEST_ID.test(value) ? value : randomUUID();
}

/** Runs `fn` (the whole handling of one request) with its context. */
export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
