import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { answerBody, passedHeaders, readAnswer } from './answer-body';
import {
  assertMethodName,
  assertTokenShape,
  encodeFilePath,
  normalizeQuery,
  parseApiBase,
} from './bot-api-paths';
import { callGuard } from './call-guard';
import { CallOutcomes, eventCode } from './call-outcomes';
import { resultElementTexts } from './result-elements';
import { urlencodedBody } from './form-fields';
import { createMultipartBody, type MultipartFields, type MultipartFile } from './multipart-body';
import { forwardHeaders, jsonBody, type OutgoingBody } from './outgoing-request';
import { relayBody, type RequestBodyFailure } from './request-body';
import { TelegramAbortError, TelegramNetworkError, TelegramRequestError } from './telegram.errors';
import {
  type BufferedResponse,
  type BufferingCallOptions,
  type CallOptions,
  type ForwardRequest,
  type StreamedResponse,
  type TelegramCallEvent,
  type TelegramClientOptions,
  type TelegramUser,
} from './telegram.types';

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECTIONS = 16;
// Telegram's front ends keep idle connections longer; undici also honours a
// `Keep-Alive: timeout=` hint, so this only bounds how long an idle socket is reused.
const KEEP_ALIVE_MS = 10_000;
// Room past getUpdates' own `timeout` for Telegram to answer an expired long poll.
const LONG_POLL_SLACK_MS = 10_000;

/** One streamed exchange: a forwarded call or a file download. */
interface StreamCall {
  /** The Bot API method, as events and errors name it. */
  method: string;
  path: string;
  httpMethod: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer | Readable;
  bodyFailure?: () => RequestBodyFailure | undefined;
  options?: CallOptions;
}

/**
 * A Bot API client for one bot over one keep-alive connection pool.
 *
 * The token lives only in the request paths built here, in private fields. Every
 * error thrown is one of this lib's own types built from safe fields; undici's
 * errors are reduced to their code name and the API host:port, never attached.
 */
export class TelegramClient {
  readonly botId?: string;
  readonly #pool: Pool;
  readonly #botPath: string;
  readonly #filePath: string;
  readonly #hostPort: string;
  readonly #outcomes: CallOutcomes;
  readonly #timeoutMs: number;
  readonly #onCall?: (event: TelegramCallEvent) => void;
  #closing?: Promise<void>;

  constructor(options: TelegramClientOptions) {
    const token = options.token.reveal();
    assertTokenShape(token);
    const api = parseApiBase(options.apiBase);
    this.botId = options.botId;
    this.#botPath = `${api.pathPrefix}/bot${token}`;
    this.#filePath = `${api.pathPrefix}/file/bot${token}`;
    this.#hostPort = api.hostPort;
    const secretHalf = token.slice(token.indexOf(':') + 1);
    // A suffix of the token is the whole token only when there is no colon: no value compare.
    this.#outcomes = new CallOutcomes(
      api.hostPort,
      secretHalf.length >= 8 && secretHalf.length < token.length ? [token, secretHalf] : [token],
    );
    this.#timeoutMs = positiveOr(options.timeoutMs, DEFAULT_TIMEOUT_MS);
    this.#onCall = options.onCall;
    this.#pool = new Pool(api.origin, {
      connections: positiveOr(options.connections, DEFAULT_CONNECTIONS),
      keepAliveTimeout: KEEP_ALIVE_MS,
      // Deadlines are per call (each request's own, or a CallGuard); pool-wide ones
      // would cut long polls.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /**
   * Calls a method with a JSON body and returns its `result`. Without
   * `options.timeoutMs`, getUpdates gets its own `timeout` plus 10 s so a long poll
   * is never cut short.
   */
  async call<T = unknown>(
    method: string,
    params?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<T> {
    assertMethodName(method);
    const timeoutMs = this.#callTimeout(method, params, options);
    return this.#exchange<T>(method, jsonBody(params), timeoutMs, options);
  }

  /** Like call, with a form body: objects (reply_markup...) JSON-encoded per field. */
  async callUrlencoded<T = unknown>(
    method: string,
    params?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<T> {
    assertMethodName(method);
    const body = { contentType: 'application/x-www-form-urlencoded', body: urlencodedBody(params) };
    return this.#exchange<T>(method, body, this.#callTimeout(method, params, options), options);
  }

  /**
   * Like call, with a multipart/form-data body streamed from the file streams as
   * the connection drains. A streamed upload is never retried. The streams are
   * read, never destroyed: after a failure the caller disposes of them.
   */
  async callMultipart<T = unknown>(
    method: string,
    fields: MultipartFields,
    files: readonly MultipartFile[],
    options?: CallOptions,
  ): Promise<T> {
    assertMethodName(method);
    const timeoutMs = this.#timeout(options);
    const multipart = createMultipartBody(fields, files);
    const body = {
      contentType: multipart.contentType,
      body: multipart.stream,
      contentLength: multipart.contentLength,
      failure: multipart.failure,
    };
    return this.#exchange<T>(method, body, timeoutMs, options);
  }

  /**
   * getUpdates (a JSON body, the long-poll timeout as `call` gives it), with each
   * update's text exactly as Telegram sent it: `texts[i]` is `updates[i]` before
   * parsing, so ingress can deliver Telegram's bytes rather than a re-serialisation
   * (escapes, `1.0`, integers beyond 2^53 kept). `texts` is undefined when the answer
   * could not be cut into its updates (the updates are then all there is).
   */
  async getUpdates(
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<{ updates: unknown; texts?: string[] }> {
    const timeoutMs = this.#callTimeout('getUpdates', params, options);
    const { result, text } = await this.#exchangeKeepingText<unknown>(
      'getUpdates',
      jsonBody(params),
      timeoutMs,
      options,
    );
    const texts = text === undefined ? undefined : resultElementTexts(text);
    const whole = Array.isArray(result) && texts?.length === result.length;
    return whole ? { updates: result, texts } : { updates: result };
  }

  getMe(options?: CallOptions): Promise<TelegramUser> {
    return this.call<TelegramUser>('getMe', undefined, options);
  }

  /**
   * Passes a request through unchanged (Bot API drop-in): the body streams with its
   * own content-type, and Telegram's status, content headers and body stream come
   * back as they are, whatever the status. No retries. The timeout covers the wait
   * for response headers (the upload included); the body may then idle that long
   * between chunks.
   */
  forward(
    method: string,
    request: ForwardRequest,
    options?: CallOptions,
  ): Promise<StreamedResponse>;
  forward(
    method: string,
    request: ForwardRequest,
    options: BufferingCallOptions,
  ): Promise<StreamedResponse | BufferedResponse>;
  async forward(
    method: string,
    request: ForwardRequest,
    options?: CallOptions | BufferingCallOptions,
  ): Promise<StreamedResponse | BufferedResponse> {
    assertMethodName(method);
    const query = normalizeQuery(request.query);
    const headers = forwardHeaders(request);
    let body: Buffer | Readable | undefined;
    let failure: (() => RequestBodyFailure | undefined) | undefined;
    if (Buffer.isBuffer(request.body)) {
      body = request.body;
    } else if (request.body) {
      const relayed = relayBody(request.body);
      body = relayed.stream;
      failure = relayed.failure;
    }
    const path = `${this.#botPath}/${method}${query ? `?${query}` : ''}`;
    const httpMethod = request.httpMethod;
    return this.#stream({ method, path, httpMethod, headers, body, bodyFailure: failure, options });
  }

  /** Streams `/file/bot<token>/<filePath>` (a getFile `file_path`); status passed through. */
  async downloadFile(filePath: string, options?: CallOptions): Promise<StreamedResponse> {
    const path = `${this.#filePath}/${encodeFilePath(filePath)}`;
    const call = { method: 'downloadFile', path, httpMethod: 'GET' as const, headers: {} };
    return (await this.#stream({ ...call, options })) as StreamedResponse;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Stops taking calls and closes the connections once in-flight calls are done; calls
   * still running after `graceMs` (an answer nobody reads to its end) are cut off.
   * Resolves to true when some were.
   */
  async close(graceMs = Infinity): Promise<boolean> {
    this.#closing ??= this.#pool.close().catch(() => undefined);
    if (!Number.isFinite(graceMs)) {
      await this.#closing;
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    });
    const cut = await Promise.race([this.#closing.then(() => false), late]);
    clearTimeout(timer);
    if (cut) await this.destroy();
    return cut;
  }

  /** Closes every connection now; in-flight calls fail with a network error. */
  destroy(): Promise<void> {
    this.#closing = this.#pool.destroy().catch(() => undefined);
    return this.#closing;
  }

  toJSON(): Record<string, unknown> {
    return { botId: this.botId, api: this.#hostPort };
  }

  [inspect.custom](): string {
    return `TelegramClient(${this.botId ?? '?'} @ ${this.#hostPort})`;
  }

  async #exchange<T>(
    method: string,
    outgoing: OutgoingBody,
    timeoutMs: number,
    options: CallOptions | undefined,
  ): Promise<T> {
    return (await this.#exchangeKeepingText<T>(method, outgoing, timeoutMs, options)).result;
  }

  /** An exchange that also returns the answer's text as it arrived. */
  async #exchangeKeepingText<T>(
    method: string,
    outgoing: OutgoingBody,
    timeoutMs: number,
    options: CallOptions | undefined,
  ): Promise<{ result: T; text: string | undefined }> {
    const started = performance.now();
    const guard = callGuard(
      timeoutMs,
      options,
      typeof outgoing.body === 'object' && !Buffer.isBuffer(outgoing.body),
    );
    try {
      if (guard?.aborted) throw new TelegramAbortError({ method });
      this.#assertOpen(method);
      const headers: Record<string, string> = { 'content-type': outgoing.contentType };
      if (outgoing.contentLength !== undefined) {
        headers['content-length'] = String(outgoing.contentLength);
      }
      const response = await this.#pool.request({
        path: `${this.#botPath}/${method}`,
        method: 'POST',
        headers,
        body: outgoing.body,
        signal: guard?.signal,
        headersTimeout: guard ? undefined : timeoutMs,
        bodyTimeout: guard ? undefined : timeoutMs,
      });
      const text = await readAnswer(response.body);
      const result = this.#outcomes.answerResult<T>(method, response.statusCode, text);
      this.#emit({ method, ok: true, started });
      return { result, text };
    } catch (error) {
      const failure = this.#outcomes.failure(method, error, timeoutMs, guard, outgoing.failure?.());
      this.#emit({ method, ok: false, errorCode: eventCode(failure), started });
      throw failure;
    } finally {
      guard?.dispose();
    }
  }

  async #stream(call: StreamCall): Promise<StreamedResponse | BufferedResponse> {
    const { method, options } = call;
    const started = performance.now();
    const timeoutMs = this.#timeout(options);
    const streamed = call.body !== undefined && !Buffer.isBuffer(call.body);
    const guard = callGuard(timeoutMs, options, streamed);
    let headers: Record<string, string>;
    let response: Dispatcher.ResponseData;
    try {
      if (guard?.aborted) throw new TelegramAbortError({ method });
      this.#assertOpen(method);
      response = await this.#pool.request({
        path: call.path,
        method: call.httpMethod,
        headers: call.headers,
        body: call.body,
        signal: guard?.signal,
        headersTimeout: guard ? undefined : timeoutMs,
        bodyTimeout: timeoutMs,
      });
      guard?.stopTimer();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      this.#emit({ method, ok, errorCode: ok ? undefined : response.statusCode, started });
      headers = passedHeaders(response.headers);
    } catch (error) {
      guard?.dispose();
      const failure = this.#outcomes.failure(method, error, timeoutMs, guard, call.bodyFailure?.());
      this.#emit({ method, ok: false, errorCode: eventCode(failure), started });
      throw failure;
    }
    const fail = (error: unknown) =>
      this.#outcomes.failure(method, error, timeoutMs, guard, undefined);
    const bufferUpTo = (options as BufferingCallOptions | undefined)?.bufferUpTo;
    const body = await answerBody(response.body, headers, bufferUpTo, guard, fail);
    return { statusCode: response.statusCode, headers, body } as
      StreamedResponse | BufferedResponse;
  }

  #callTimeout(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
  ): number {
    if (options?.timeoutMs !== undefined) return this.#timeout(options);
    const pollSeconds = params?.timeout;
    if (method === 'getUpdates' && typeof pollSeconds === 'number' && pollSeconds > 0) {
      return Math.max(this.#timeoutMs, pollSeconds * 1000 + LONG_POLL_SLACK_MS);
    }
    return this.#timeoutMs;
  }

  #assertOpen(method: string): void {
    if (this.#closing) {
      throw new TelegramNetworkError({
        method,
        code: 'ECLOSED',
        reason: `client for ${this.#hostPort} is closed`,
      });
    }
  }

  #timeout(options: CallOptions | undefined): number {
    const timeoutMs = options?.timeoutMs;
    if (timeoutMs === undefined) return this.#timeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TelegramRequestError('timeoutMs must be a positive number');
    }
    return timeoutMs;
  }

  #emit(fields: { method: string; ok: boolean; errorCode?: number; started: number }): void {
    if (!this.#onCall) return;
    const event: TelegramCallEvent = {
      botId: this.botId,
      method: fields.method,
      ok: fields.ok,
      durationMs: performance.now() - fields.started,
    };
    if (fields.errorCode !== undefined) event.errorCode = fields.errorCode;
    try {
      this.#onCall(event);
    } catch {
      // A metrics hook must never change the outcome of a call.
    }
  }
}

function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
