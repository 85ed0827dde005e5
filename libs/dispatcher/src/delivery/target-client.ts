import { Injectable } from '@nestjs/common';
import { Pool } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { ATTEMPT_BODY_BYTES } from '@relaygram/contracts';
import { DEAD_LETTER_BODY_LIMIT } from '@relaygram/queue';

/** How one attempt ended at the HTTP level. */
export type TargetAnswer =
  | {
      kind: 'response';
      status: number;
      /** The `Retry-After` header, as sent. */
      retryAfter?: string;
      /**
       * What was kept of the body: up to 1 KiB of a failure; of a 2xx, its first
       * ATTEMPT_BODY_BYTES (the delivery log's), or up to `replyLimit` of a JSON one.
       */
      body: Buffer;
      /** The body was read to its end and kept whole. */
      complete: boolean;
      /** A 2xx answer with a JSON content type. */
      json: boolean;
    }
  | { kind: 'timeout' }
  | { kind: 'network'; code: string }
  /** Cut short by `abortAll` (shutdown): the outcome is unknown. */
  | { kind: 'aborted' };

export interface TargetRequest {
  /** `http(s)://host:port`, the pool the request goes through. */
  origin: string;
  /** Path and query of the target URL. */
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  /** Bytes kept of a 2xx JSON answer, for a webhook reply; 0 when replies are off. */
  replyLimit: number;
}

/**
 * A body larger than this is not read to its end: the connection is dropped instead,
 * which costs a reconnect but never lets a target make us read megabytes.
 */
const READ_LIMIT = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * POSTs deliveries over keep-alive connections, one undici pool per target origin,
 * shared by every route on that origin. Redirects are never followed (undici's
 * `request` on a Pool has no redirect handling): a 3xx is an answer like any other.
 *
 * The route's timeout bounds connecting (TLS included: undici's connect timeout, so a
 * pool per origin and timeout), the wait for the answer once sent (headersTimeout) and
 * each pause while reading the body (bodyTimeout; bodies are read up to 64 KiB).
 * undici's own timers are used rather than a timer and an AbortController per attempt:
 * they cost nothing per request, at a resolution of about half a second.
 */
@Injectable()
export class TargetClient {
  readonly #pools = new Map<string, Pool>();
  #inFlight = 0;
  #aborted = false;

  async send(request: TargetRequest): Promise<TargetAnswer> {
    if (this.#aborted) return { kind: 'aborted' };
    this.#inFlight += 1;
    try {
      const response = await this.#pool(request.origin, request.timeoutMs).request({
        path: request.path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        headersTimeout: request.timeoutMs,
        bodyTimeout: request.timeoutMs,
      });
      const status = response.statusCode;
      const ok = status >= 200 && status <= 299;
      const json = ok && isJson(response.headers);
      const keep = ok
        ? Math.max(json ? request.replyLimit : 0, ATTEMPT_BODY_BYTES)
        : DEAD_LETTER_BODY_LIMIT;
      const body = await readBody(response.body, keep);
      const retryAfter = firstHeader(response.headers['retry-after']);
      return { kind: 'response', status, retryAfter, json, ...body };
    } catch (error) {
      if (this.#aborted) return { kind: 'aborted' };
      const code = errorCode(error);
      if (
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT' ||
        code === 'UND_ERR_CONNECT_TIMEOUT'
      ) {
        return { kind: 'timeout' };
      }
      return { kind: 'network', code };
    } finally {
      this.#inFlight -= 1;
    }
  }

  /**
   * Shutdown: cuts every attempt in flight short (they end as `aborted`) by destroying
   * the pools, and refuses new ones.
   */
  abortAll(): void {
    this.#aborted = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    for (const pool of pools) void pool.destroy().catch(() => undefined);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Closes the pools of origins no route uses any more, once their requests are done. */
  async retain(origins: ReadonlySet<string>): Promise<void> {
    const retired: Pool[] = [];
    for (const [key, pool] of this.#pools) {
      if (origins.has(key.slice(key.indexOf(' ') + 1))) continue;
      this.#pools.delete(key);
      retired.push(pool);
    }
    await Promise.all(retired.map((pool) => pool.close().catch(() => undefined)));
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }

  #pool(origin: string, timeoutMs: number): Pool {
    const key = `${timeoutMs} ${origin}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new Pool(origin, {
        // In-flight requests are bounded by the routes' worker slots, not here.
        connections: null,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        connectTimeout: timeoutMs,
      });
      this.#pools.set(key, pool);
    }
    return pool;
  }
}

/**
 * Reads a body keeping its first `keep` bytes. Bodies up to READ_LIMIT are read to the
 * end so the connection goes back to the pool; longer ones are cut off. A body that
 * breaks after the status arrived still leaves the status standing: the target has
 * answered.
 */
function readBody(body: Readable, keep: number): Promise<{ body: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let settled = false;
    const finish = (complete: boolean) => {
      if (settled) return;
      settled = true;
      body.removeAllListeners('data');
      const bytes =
        chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve({ body: bytes, complete });
    };
    body.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (kept < keep) {
        const part = chunk.length <= keep - kept ? chunk : chunk.subarray(0, keep - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (total > Math.max(keep, READ_LIMIT)) {
        body.destroy();
        finish(false);
      }
    });
    body.once('end', () => finish(total <= keep));
    body.once('error', () => finish(false));
    body.once('close', () => finish(false));
  });
}

function isJson(headers: IncomingHttpHeaders): boolean {
  const type = firstHeader(headers['content-type'])?.toLowerCase();
  return type !== undefined && (type.startsWith('application/json') || type.includes('+json'));
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string') return name;
  }
  return 'EUNKNOWN';
}
