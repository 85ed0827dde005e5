import type { Readable } from 'node:stream';
import type {
  FastifyError,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
  onRequestAsyncHookHandler,
} from 'fastify';
import { isPacedMethod } from '@relaygram/pacing';
import type { StreamedResponse } from '@relaygram/telegram';
import { checkAccess, type AccessDenial } from '../access/access-check';
import {
  hasRedirectingMethod,
  isMethodParameter,
  queryRedirectsMethod,
  redirectsMethod,
} from '../access/method-rules';
import { accessOf, declareAccess, grantAccess } from '../access/request-access';
import { callerSignal, type GatewayRouteDeps } from '../rest/rest-api.routes';
import { tooManyRequestsDescription } from '../pacing/gateway-pacing.service';
import { parseForm } from '../rest/form-body';
import {
  dropInError,
  dropInTelegramFailure,
  type DropInAnswer,
} from '../telegram/telegram-error.mapper';
import { UploadGate } from '../uploads/upload-gate';
import { bodyKind } from './body-kind';
import { loggedPath, parseDropInPath } from './drop-in-path';
import { MultipartNameScanner, MultipartScanError } from './multipart-name-scanner';
import { peekMultipartFields } from './multipart-peek';
import { isPullMethod } from '../pull/pull-updates.service';

/** JSON and form bodies are read whole to be checked; Telegram's calls are far smaller. */
const MAX_BUFFERED_BODY = 1024 * 1024;
/** Answers up to this size are read whole before they are sent on (files stream). */
const MAX_BUFFERED_ANSWER = 256 * 1024;
/** Room for the text fields of a multipart upload on top of the file limit. */
const MULTIPART_SLACK = 1024 * 1024;
const ALL_METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

const UNAUTHORIZED = dropInError(401, 'Unauthorized');
const NOT_FOUND = dropInError(404, 'Not Found');
const RESERVED = dropInError(403, 'Forbidden: reserved by the gateway');
const TEST_ENVIRONMENT = dropInError(
  403,
  'Forbidden: the test environment is not served by this gateway',
);
const METHOD_PARAMETER = dropInError(
  400,
  'Bad Request: parameter "method" may only repeat the method in the path',
);
const BAD_JSON = dropInError(400, "Bad Request: can't parse JSON object");
const AMBIGUOUS_BODY = dropInError(400, 'Bad Request: unsupported Content-Type');
const MALFORMED_MULTIPART = dropInError(400, 'Bad Request: malformed multipart body');
const GONE = dropInError(503, 'Service Unavailable');
const TOO_LARGE = dropInError(413, 'Request Entity Too Large');

/**
 * The Bot API drop-in: `/bot<botNumericId>:<clientToken>/<method>` and
 * `/file/bot<botNumericId>:<clientToken>/<file_path>`, answering exactly as Telegram
 * (its status and JSON passed through, no retries), so bot frameworks work with only
 * their API root changed. Bodies are relayed as they arrive; the plugin's catch-all
 * content-type parser reads nothing, so no other route's parsing changes.
 */
export function dropInRoutes(deps: GatewayRouteDeps): FastifyPluginAsync {
  return async (api) => {
    declareAccess(api);
    api.removeAllContentTypeParsers();
    api.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    api.setErrorHandler(dropInErrorHandler(deps));
    api.route({
      method: ALL_METHODS,
      url: '/bot*',
      exposeHeadRoute: false,
      onRequest: authorizeDropIn(deps, 'method'),
      handler: (request, reply) => handleMethod(deps, request, reply),
    });
    api.route({
      method: ALL_METHODS,
      url: '/file/bot*',
      exposeHeadRoute: false,
      onRequest: authorizeDropIn(deps, 'file'),
      handler: (request, reply) => handleFile(deps, request, reply),
    });
  };
}

function authorizeDropIn(
  deps: GatewayRouteDeps,
  route: 'method' | 'file',
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    const target = parseDropInPath(rest, route);
    if (target.kind === 'malformed') {
      await sendAnswer(reply, NOT_FOUND);
      return;
    }
    const method =
      target.kind === 'method' ? target.method : target.kind === 'file' ? 'getFile' : undefined;
    if (target.kind === 'method' && isPullMethod(target.method)) {
      const granted = pullAccess(deps, request, target.token, target.numericId, target.method);
      if (granted) return;
    }
    const decision = checkAccess(deps.telegram.directory, {
      token: target.token,
      bot: { by: 'numeric-id', numericId: target.numericId },
      method,
    });
    const path = loggedPath(
      target.numericId,
      target.kind === 'method' ? target.method : target.kind === 'file' ? 'file' : '',
    );
    if (!decision.ok) {
      logRefusal(deps, path, decision.reason);
      await sendAnswer(reply, denialAnswer(decision));
      return;
    }
    if (target.kind === 'test-environment' || target.kind === 'not-found') {
      await sendAnswer(reply, target.kind === 'test-environment' ? TEST_ENVIRONMENT : NOT_FOUND);
      return;
    }
    const httpMethod = request.method;
    if (httpMethod !== 'GET' && (route === 'file' || httpMethod !== 'POST')) {
      await sendAnswer(reply, NOT_FOUND);
      return;
    }
    const telegram = deps.telegram.client(decision.bot.id);
    if (!telegram) {
      await sendAnswer(reply, UNAUTHORIZED);
      return;
    }
    grantAccess(request, {
      client: decision.client,
      bot: decision.bot,
      telegram,
      method: method as string,
      loggedPath: path,
      filePath: target.kind === 'file' ? target.filePath : undefined,
    });
  };
}

/**
 * getUpdates, deleteWebhook and getWebhookInfo of a client that owns a pull route of
 * the bot: granted whatever its `methods` list says (they touch only its own lane).
 * False for every other caller, whose call then goes through the ordinary checks (the
 * reserved-method 403 for getUpdates and deleteWebhook).
 */
function pullAccess(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  token: string | undefined,
  numericId: string,
  method: string,
): boolean {
  const decision = checkAccess(deps.telegram.directory, {
    token,
    bot: { by: 'numeric-id', numericId },
    method: undefined,
  });
  if (!decision.ok || (request.method !== 'GET' && request.method !== 'POST')) return false;
  const route = deps.pull.routeFor(decision.client.name, decision.bot.id);
  const telegram = route ? deps.telegram.client(decision.bot.id) : undefined;
  if (!route || !telegram) return false;
  grantAccess(request, {
    client: decision.client,
    bot: decision.bot,
    telegram,
    method,
    loggedPath: loggedPath(numericId, method),
    pull: route,
  });
  return true;
}

function denialAnswer(denial: AccessDenial): DropInAnswer {
  switch (denial.reason) {
    case 'bot-forbidden':
      return dropInError(403, 'Forbidden: this client may not use this bot');
    case 'invalid-method':
      return NOT_FOUND;
    case 'reserved-method':
      return RESERVED;
    case 'method-forbidden':
      return dropInError(403, `Forbidden: this client may not call ${denial.method}`);
    default:
      return UNAUTHORIZED;
  }
}

async function handleMethod(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const query = rawQuery(request.url);
  if (queryRedirectsMethod(query, access.method))
    return refuse(deps, request, reply, METHOD_PARAMETER);
  if (access.pull) return answerPull(deps, request, reply, query);
  const paced = isPacedMethod(access.method);
  if (request.method === 'GET') {
    return pacedRelay(deps, request, reply, paced ? queryParams(query) : NO_PARAMS, () =>
      access.telegram.forward(access.method, { httpMethod: 'GET', query }),
    );
  }

  const contentType = header(request, 'content-type');
  const kind = bodyKind(contentType);
  const declared = contentLength(request);
  if (kind.kind === 'ambiguous') return refuse(deps, request, reply, AMBIGUOUS_BODY);

  if (kind.kind === 'json' || kind.kind === 'form') {
    const body = await readLimited(request.raw, MAX_BUFFERED_BODY);
    if (!body) return refuse(deps, request, reply, TOO_LARGE);
    const checked =
      kind.kind === 'json' ? checkJson(body, access.method) : checkForm(body, access.method);
    if (checked.refusal) return refuse(deps, request, reply, checked.refusal);
    // Telegram reads the query too; the body wins where both name a parameter.
    const params = paced ? { ...queryParams(query), ...checked.params } : NO_PARAMS;
    return pacedRelay(deps, request, reply, params, () =>
      access.telegram.forward(access.method, { httpMethod: 'POST', query, contentType, body }),
    );
  }

  const limit = deps.telegram.options.uploadLimitBytes + MULTIPART_SLACK;
  if (declared !== undefined && declared > limit) {
    request.raw.resume();
    return refuse(deps, request, reply, TOO_LARGE);
  }
  let source: Readable = request.raw;
  let params = paced ? queryParams(query) : NO_PARAMS;
  if (paced && kind.kind === 'multipart') {
    // The chat comes before the file in what frameworks send; pacing needs it first.
    const peeked = await peekMultipartFields(
      request.raw,
      kind.boundary,
      PEEKED_FIELDS,
      ['chat_id'],
      MAX_PEEK_BYTES,
    );
    if (peeked.failed) return refuse(deps, request, reply, MALFORMED_MULTIPART);
    source = peeked.source;
    params = { ...params, ...peeked.fields };
  }
  let scanner: MultipartNameScanner | undefined;
  if (kind.kind === 'multipart')
    scanner = new MultipartNameScanner(kind.boundary, isMethodParameter);
  return pacedRelay(
    deps,
    request,
    reply,
    params,
    (gate) =>
      access.telegram.forward(
        access.method,
        {
          httpMethod: 'POST',
          query,
          contentType,
          body: (gate as UploadGate).stream,
          contentLength: declared,
        },
        { timeoutMs: deps.telegram.options.uploadTimeoutMs },
      ),
    () =>
      new UploadGate(source, {
        limitBytes: limit,
        inspect: scanner ? (chunk) => inspectMultipart(scanner, chunk, access.method) : undefined,
      }),
    source,
  );
}

/** getUpdates' parameters are few and short; aiogram sends them as multipart. */
const PULL_PARAMS = ['offset', 'limit', 'timeout', 'allowed_updates', 'drop_pending_updates'];
const NO_FIELD = ['\0'];

/**
 * A pull route's getUpdates, deleteWebhook or getWebhookInfo: its parameters from the
 * query and the body (JSON, form or multipart, the body winning as with Telegram),
 * answered from the lane.
 */
async function answerPull(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  query: string,
): Promise<FastifyReply> {
  const access = accessOf(request);
  let params: Record<string, unknown> = queryParams(query);
  if (request.method === 'POST') {
    const kind = bodyKind(header(request, 'content-type'));
    if (kind.kind === 'ambiguous') return refuse(deps, request, reply, AMBIGUOUS_BODY);
    if (kind.kind === 'multipart') {
      const peeked = await peekMultipartFields(
        request.raw,
        kind.boundary,
        PULL_PARAMS,
        NO_FIELD,
        MAX_BUFFERED_BODY,
      );
      if (peeked.failed) return refuse(deps, request, reply, MALFORMED_MULTIPART);
      peeked.source.resume();
      params = { ...params, ...peeked.fields };
    } else {
      const body = await readLimited(request.raw, MAX_BUFFERED_BODY);
      if (!body) return refuse(deps, request, reply, TOO_LARGE);
      if (kind.kind === 'json' || kind.kind === 'form') {
        const checked =
          kind.kind === 'json' ? checkJson(body, access.method) : checkForm(body, access.method);
        if (checked.refusal) return refuse(deps, request, reply, checked.refusal);
        params = { ...params, ...checked.params };
      }
    }
  }
  const answer = await deps.pull.answer(
    access.method,
    access.pull as NonNullable<typeof access.pull>,
    access.bot.id,
    params,
    callerSignal(reply),
  );
  // The caller hung up while its getUpdates waited: nobody reads an answer.
  if (!answer) return reply;
  logCall(deps, request, answer.status);
  if (Buffer.isBuffer(answer.body))
    return reply.code(answer.status).type('application/json').send(answer.body);
  return sendAnswer(reply, answer as DropInAnswer);
}

/** Parameters for pacing when the method is not paced: nothing is read. */
const NO_PARAMS: Readonly<Record<string, unknown>> = Object.freeze({});
/** Fields of a multipart body pacing reads: the chat, and what an album or batch counts. */
const PEEKED_FIELDS = ['chat_id', 'media', 'message_ids'];
/** A multipart body is read at most this far for its chat before the upload starts. */
const MAX_PEEK_BYTES = 64 * 1024;

function queryParams(query: string): Record<string, unknown> {
  return query === '' ? {} : Object.fromEntries(new URLSearchParams(query));
}

function tooManyRequests(retryAfter: number): DropInAnswer {
  return {
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: tooManyRequestsDescription(retryAfter),
      parameters: { retry_after: retryAfter },
    },
  };
}

/**
 * Takes the call's slot, then relays it. No slot within max_wait: Telegram's own 429,
 * without calling it. Telegram's own 429 (passed through as always) pauses what it hit
 * for every replica. The upload gate, when there is one, opens only once the call may go.
 */
async function pacedRelay(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: Readonly<Record<string, unknown>>,
  exchange: (gate?: UploadGate) => Promise<StreamedResponse>,
  openGate?: () => UploadGate,
  body?: Readable,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const pace =
    params === NO_PARAMS
      ? undefined
      : await deps.pacing.pace(access.bot, access.method, params, callerSignal(reply));
  if (pace?.kind === 'refused' || pace?.kind === 'aborted') {
    // What the client still sends is read and dropped, so it gets the answer.
    body?.resume();
    return refuse(
      deps,
      request,
      reply,
      pace.kind === 'refused' ? tooManyRequests(pace.retryAfter) : GONE,
    );
  }
  const gate = openGate?.();
  const on429 =
    pace?.kind === 'go'
      ? (retryAfter: number | undefined) =>
          deps.pacing.telegram429(access.bot, pace.plan, retryAfter)
      : undefined;
  return relay(deps, request, reply, () => exchange(gate), gate, on429);
}

async function handleFile(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  return relay(deps, request, reply, () => access.telegram.downloadFile(access.filePath ?? ''));
}

/** Sends Telegram's answer on as it is: status, content headers, body stream. */
async function relay(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  exchange: () => Promise<StreamedResponse>,
  gate?: UploadGate,
  on429?: (retryAfter: number | undefined) => Promise<void>,
): Promise<FastifyReply> {
  let answer: StreamedResponse;
  try {
    answer = await exchange();
  } catch (error) {
    gate?.refuse();
    const refusal = gate?.refusal;
    if (refusal instanceof MultipartScanError || refusal instanceof MethodFieldError) {
      return refuse(
        deps,
        request,
        reply,
        refusal instanceof MethodFieldError ? METHOD_PARAMETER : MALFORMED_MULTIPART,
      );
    }
    if (gate?.tooLarge) return refuse(deps, request, reply, TOO_LARGE);
    const failure = dropInTelegramFailure(error);
    logCall(deps, request, failure.status, error instanceof Error ? error.message : undefined);
    return sendAnswer(reply, failure);
  }
  // Telegram answered before the body ended (it refused early): drop the rest.
  if (gate && !gate.sourceEnded) gate.refuse();
  let body: Readable | Buffer = answer.body;
  // A 429 is read whole whatever its length header says: its retry_after sets the pause.
  const tooMany = on429 !== undefined && answer.statusCode === 429;
  if (isSmall(answer) || tooMany) {
    // Bot API answers are small: sent as one buffer they cost less than a piped stream,
    // and a connection lost mid-answer still gets a proper 502.
    try {
      body = await readAll(answer.body);
    } catch (error) {
      const failure = dropInTelegramFailure(error);
      logCall(deps, request, failure.status, error instanceof Error ? error.message : undefined);
      return sendAnswer(reply, failure);
    }
  }
  if (tooMany && Buffer.isBuffer(body)) await on429(retryAfterOf(body));
  logCall(deps, request, answer.statusCode);
  reply.code(answer.statusCode).headers(answer.headers);
  return reply.send(body);
}

function retryAfterOf(body: Buffer): number | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as {
      parameters?: { retry_after?: unknown };
    };
    const retryAfter = value.parameters?.retry_after;
    return typeof retryAfter === 'number' && retryAfter > 0 ? retryAfter : undefined;
  } catch {
    return undefined;
  }
}

function isSmall(answer: StreamedResponse): boolean {
  const length = Number(answer.headers['content-length']);
  return Number.isSafeInteger(length) && length <= MAX_BUFFERED_ANSWER;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

class MethodFieldError extends Error {
  override readonly name = 'MethodFieldError';
}

function inspectMultipart(
  scanner: MultipartNameScanner,
  chunk: Buffer,
  pathMethod: string,
): Error | undefined {
  try {
    for (const part of scanner.push(chunk)) {
      if (part.value !== undefined && redirectsMethod(part.value, pathMethod)) {
        return new MethodFieldError('method field');
      }
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new MultipartScanError('unreadable multipart body');
  }
}

interface CheckedBody {
  refusal?: DropInAnswer;
  params: Record<string, unknown>;
}

function checkJson(body: Buffer, pathMethod: string): CheckedBody {
  if (body.length === 0) return { params: {} };
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { refusal: BAD_JSON, params: {} };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { refusal: BAD_JSON, params: {} };
  }
  const params = value as Record<string, unknown>;
  return hasRedirectingMethod(Object.entries(params), pathMethod)
    ? { refusal: METHOD_PARAMETER, params }
    : { params };
}

function checkForm(body: Buffer, pathMethod: string): CheckedBody {
  const params = parseForm(body.toString('utf8'));
  return hasRedirectingMethod(Object.entries(params), pathMethod)
    ? { refusal: METHOD_PARAMETER, params }
    : { params };
}

/** The whole body if it has at most `limit` bytes; else undefined, the rest drained. */
async function readLimited(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed on an early return: the request must still get its answer.
  for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      stream.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

function rawQuery(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at + 1);
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function contentLength(request: FastifyRequest): number | undefined {
  const value = header(request, 'content-length');
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

function refuse(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: DropInAnswer,
): FastifyReply {
  logCall(deps, request, answer.status, answer.body.description);
  return sendAnswer(reply, answer);
}

function sendAnswer(reply: FastifyReply, answer: DropInAnswer): FastifyReply {
  return reply.code(answer.status).send(answer.body);
}

function logCall(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  status: number,
  problem?: string,
): void {
  const level = status >= 500 ? 'warn' : 'debug';
  if (!deps.logger.isLevelEnabled(level)) return;
  const access = accessOf(request);
  deps.logger[level](
    {
      client: access.client.name,
      bot: access.bot.id,
      path: access.loggedPath,
      status,
      problem,
    },
    'drop-in call',
  );
}

function logRefusal(deps: GatewayRouteDeps, path: string, reason: string): void {
  if (deps.logger.isLevelEnabled('debug'))
    deps.logger.debug({ path, reason }, 'drop-in call refused');
}

function dropInErrorHandler(deps: GatewayRouteDeps) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) return sendAnswer(reply, TOO_LARGE);
    if (status >= 400 && status < 500)
      return sendAnswer(
        reply,
        dropInError(status, `Bad Request: ${error.code ?? 'invalid request'}`),
      );
    deps.logger.error({ err: error }, 'drop-in request failed');
    return sendAnswer(reply, dropInError(500, 'Internal Server Error'));
  };
}
