import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver saw it. */
export interface Delivery {
  method: string;
  /** Path and query string, as requested. */
  path: string;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The body parsed as JSON; undefined when it is not JSON. Parsed on first access. */
  readonly json: unknown;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /** The status answered; 0 when the connection was dropped without an answer. */
  status: number;
}

export type ResponseSpec =
  | {
      status: number;
      body?: string | object;
      headers?: Record<string, string>;
      /** Wait this long before answering. */
      delayMs?: number;
    }
  | { drop: true; delayMs?: number };

export type Responder = ResponseSpec | ((delivery: Delivery) => ResponseSpec);

export interface RecordingReceiverOptions {
  port?: number;
  host?: string;
  /** false: only count requests (for benchmarks); deliveries stays empty. */
  record?: boolean;
}

export interface WaitOptions {
  timeoutMs?: number;
}

interface Waiter {
  check: () => boolean;
  timer: NodeJS.Timeout;
  reject: (error: Error) => void;
}

const DEFAULT_RESPONSE: ResponseSpec = { status: 204 };

class RecordedDelivery implements Delivery {
  status = 0;
  private parsed: { value: unknown } | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly headers: Record<string, string>,
    readonly body: Buffer,
    readonly receivedAt: number,
  ) {}

  get json(): unknown {
    if (!this.parsed) {
      let value: unknown;
      try {
        value = this.body.length === 0 ? undefined : JSON.parse(this.body.toString('utf8'));
      } catch {
        value = undefined;
      }
      this.parsed = { value };
    }
    return this.parsed.value;
  }
}

/**
 * An HTTP server standing in for a webhook target: it records every request (any method, any
 * path) and answers as scripted: 204 by default, a fixed or computed answer with
 * `respondWith`, a queue of one-off answers with `respondNext`, including slow answers,
 * redirects (answered, never followed: that is the client's business) and dropped
 * connections. Built on node:http with keep-alive so the dispatcher benchmark can push
 * thousands of requests a second through it; `record: false` keeps only a count.
 */
export class RecordingReceiver {
  readonly deliveries: Delivery[] = [];
  private received = 0;
  private responder: Responder = DEFAULT_RESPONSE;
  private readonly queue: ResponseSpec[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: http.Server,
    private readonly record: boolean,
  ) {}

  static async start(options: RecordingReceiverOptions = {}): Promise<RecordingReceiver> {
    const server = http.createServer();
    // Longer than client keep-alive pools keep idle sockets, so a client never reuses a
    // socket this server is closing at the same moment.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    const receiver = new RecordingReceiver(server, options.record ?? true);
    server.on('request', (request, response) => receiver.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return receiver;
  }

  /** Base URL; any path under it is accepted and recorded. */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    const host = address.includes(':') ? `[${address}]` : address;
    return `http://${host}:${port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Requests received (fully read), recorded or not. */
  get count(): number {
    return this.received;
  }

  /** The answer from now on, when no `respondNext` answer is queued. */
  respondWith(responder: Responder): void {
    if (typeof responder === 'function' && !this.record) {
      throw new Error('a computed answer needs a receiver that records');
    }
    this.responder = responder;
  }

  /** One-off answers, used in order before falling back to `respondWith`'s. */
  respondNext(specs: ResponseSpec[]): void {
    this.queue.push(...specs);
  }

  /** Forgets what was received (deliveries and count). */
  clear(): void {
    this.deliveries.length = 0;
    this.received = 0;
  }

  /** Back to answering 204 with nothing queued, and nothing recorded. */
  reset(): void {
    this.clear();
    this.queue.length = 0;
    this.responder = DEFAULT_RESPONSE;
  }

  /** Resolves with the deliveries once `count` requests have been received. */
  waitFor(count: number, options?: WaitOptions): Promise<Delivery[]>;
  /** Resolves with the first recorded delivery matching `predicate`. */
  waitFor(predicate: (delivery: Delivery) => boolean, options?: WaitOptions): Promise<Delivery>;
  waitFor(
    target: number | ((delivery: Delivery) => boolean),
    options: WaitOptions = {},
  ): Promise<Delivery[] | Delivery> {
    const timeoutMs = options.timeoutMs ?? 5_000;
    if (typeof target === 'number') {
      return this.until(
        () => this.received >= target,
        () => [...this.deliveries],
        timeoutMs,
        () => `${this.received} of ${target} requests received`,
      );
    }
    if (!this.record) throw new Error('waitFor(predicate) needs a receiver that records');
    return this.until(
      () => this.deliveries.some(target),
      () => this.deliveries.find(target) as Delivery,
      timeoutMs,
      () => `no matching delivery among ${this.deliveries.length}`,
    );
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error('the receiver stopped'));
    }
    this.waiters.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private until<T>(
    done: () => boolean,
    value: () => T,
    timeoutMs: number,
    describe: () => string,
  ): Promise<T> {
    if (done()) return Promise.resolve(value());
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        check: () => {
          if (!done()) return false;
          clearTimeout(waiter.timer);
          resolve(value());
          return true;
        },
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`timed out after ${timeoutMs} ms: ${describe()}`));
        }, timeoutMs),
        reject,
      };
      this.waiters.add(waiter);
    });
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const receivedAt = Date.now();
    if (!this.record) {
      request.resume();
      request.on('end', () => {
        this.received++;
        this.answer(request, response, undefined);
      });
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const delivery = new RecordedDelivery(
        request.method ?? 'GET',
        request.url ?? '/',
        flattenHeaders(request),
        chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        receivedAt,
      );
      this.deliveries.push(delivery);
      this.received++;
      this.answer(request, response, delivery);
    });
  }

  private answer(
    request: IncomingMessage,
    response: ServerResponse,
    delivery: RecordedDelivery | undefined,
  ): void {
    const spec = this.nextSpec(delivery);
    if (delivery && 'status' in spec) delivery.status = spec.status;
    this.notifyWaiters();
    const delayMs = spec.delayMs ?? 0;
    if (delayMs <= 0) {
      send(request, response, spec);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send(request, response, spec);
    }, delayMs);
    this.timers.add(timer);
  }

  private nextSpec(delivery: Delivery | undefined): ResponseSpec {
    const queued = this.queue.shift();
    if (queued) return queued;
    if (typeof this.responder !== 'function') return this.responder;
    if (!delivery) return DEFAULT_RESPONSE;
    try {
      return this.responder(delivery);
    } catch (error) {
      // A throwing script is a bug in the test: answer it visibly instead of crashing the
      // process that hosts the receiver.
      return { status: 500, body: `responder failed: ${String(error)}` };
    }
  }

  private notifyWaiters(): void {
    if (this.waiters.size === 0) return;
    for (const waiter of this.waiters) {
      if (waiter.check()) this.waiters.delete(waiter);
    }
  }
}

function send(request: IncomingMessage, response: ServerResponse, spec: ResponseSpec): void {
  if ('drop' in spec) {
    request.socket.destroy();
    return;
  }
  if (response.destroyed) return;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    headers[name.toLowerCase()] = value;
  }
  let payload: string | undefined;
  if (typeof spec.body === 'string') {
    payload = spec.body;
  } else if (spec.body !== undefined) {
    payload = JSON.stringify(spec.body);
    headers['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  response.writeHead(spec.status, headers);
  response.end(payload);
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
