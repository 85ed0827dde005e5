import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { outboundOf } from '@relaygram/config';
import { isPacedMethod } from '@relaygram/pacing';
import { readWhole } from '@relaygram/telegram';
import { checkAccess } from '../access/access-check';
import { isMethodParameter, queryRedirectsMethod } from '../access/method-rules';
import {
  accessOf,
  declareAccess,
  grantAccess,
  headerValue,
  type GatewayAccess,
} from '../access/request-access';
import { authHook } from '../http/auth-hook';
import { gatewayErrorHandler } from '../http/error-handler';
import type { HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { isPullMethod } from '../pull/pull-updates.service';
import { dropInError } from '../telegram/telegram-error.mapper';
import { UploadGate } from '../uploads/upload-gate';
import { bodyKind, type BodyKind } from './body-kind';
import {
  AMBIGUOUS_BODY,
  denialAnswer,
  INTERNAL_ERROR,
  MALFORMED_MULTIPART,
  METHOD_PARAMETER,
  NOT_FOUND,
  TEST_ENVIRONMENT,
  TOO_LARGE,
  UNAUTHORIZED,
} from './drop-in-answers';
import {
  checkBody,
  contentLength,
  MAX_BUFFERED_BODY,
  NO_PARAMS,
  queryParams,
  rawQuery,
} from './drop-in-body';
import { DROP_IN_FILE_DOC, DROP_IN_METHOD_DOC } from './drop-in.docs';
import { loggedPath, parseDropInPath } from './drop-in-path';
import { answerPull, pullAccess } from './drop-in-pull';
import { inspectMultipart, MAX_BUFFERED_ANSWER, pacedRelay, refuse, relay } from './drop-in-relay';
import { MultipartNameScanner } from './multipart-name-scanner';
import { peekMultipartFields } from './multipart-peek';

/** Room for the text fields of a multipart upload on top of the file limit. */
const MULTIPART_SLACK = 1024 * 1024;
const ALL_METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
/** Fields of a multipart body pacing reads: the chat, and what an album or batch counts. */
const PEEKED_FIELDS = ['chat_id', 'media', 'message_ids'];
/** A multipart body is read at most this far for its chat before the upload starts. */
const MAX_PEEK_BYTES = 64 * 1024;
const SMALL_ANSWERS_WHOLE = Object.freeze({ bufferUpTo: MAX_BUFFERED_ANSWER });

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
    api.setErrorHandler(
      gatewayErrorHandler(deps.logger, 'drop-in request failed', {
        tooLarge: TOO_LARGE,
        badRequest: (status, error) =>
          dropInError(status, `Bad Request: ${error.code ?? 'invalid request'}`),
        internal: INTERNAL_ERROR,
      }),
    );
    api.route({
      method: ALL_METHODS,
      url: '/bot*',
      exposeHeadRoute: false,
      config: DROP_IN_METHOD_DOC,
      onRequest: authHook(authorizeDropIn(deps, 'method')),
      handler: (request, reply) => handleMethod(deps, request, reply),
    });
    api.route({
      method: ALL_METHODS,
      url: '/file/bot*',
      exposeHeadRoute: false,
      config: DROP_IN_FILE_DOC,
      onRequest: authHook(authorizeDropIn(deps, 'file')),
      handler: (request, reply) => handleFile(deps, request, reply),
    });
  };
}

/** The token in the path names the bot; the path names the method, checked before the body. */
function authorizeDropIn(deps: GatewayRouteDeps, route: 'method' | 'file') {
  return (request: FastifyRequest): HttpAnswer | undefined => {
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    const target = parseDropInPath(rest, route);
    if (target.kind === 'malformed') return NOT_FOUND;
    const method =
      target.kind === 'method' ? target.method : target.kind === 'file' ? 'getFile' : undefined;
    if (target.kind === 'method' && isPullMethod(target.method)) {
      const granted = pullAccess(deps, request, target.token, target.numericId, target.method);
      if (granted) return undefined;
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
      if (deps.logger.isLevelEnabled('debug'))
        deps.logger.debug(
          { req_id: request.id, path, reason: decision.reason },
          'drop-in call refused',
        );
      return denialAnswer(decision);
    }
    if (target.kind === 'test-environment') return TEST_ENVIRONMENT;
    if (target.kind === 'not-found') return NOT_FOUND;
    const httpMethod = request.method;
    if (httpMethod !== 'GET' && (route === 'file' || httpMethod !== 'POST')) return NOT_FOUND;
    const telegram = deps.telegram.client(decision.bot.id);
    if (!telegram) return UNAUTHORIZED;
    grantAccess(request, {
      client: decision.client,
      bot: decision.bot,
      telegram,
      method: method as string,
      loggedPath: path,
      filePath: target.kind === 'file' ? target.filePath : undefined,
    });
    return undefined;
  };
}

async function handleMethod(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const query = rawQuery(request.url);
  if (queryRedirectsMethod(query, access.method)) {
    return refuse(deps, request, reply, METHOD_PARAMETER);
  }
  if (access.pull) return answerPull(deps, request, reply, query);
  // A bot with pacing off takes no slot: its calls' parameters are never read for it.
  const paced = isPacedMethod(access.method) && outboundOf(access.bot).enabled;
  if (request.method === 'GET') {
    return pacedRelay(deps, request, reply, paced ? queryParams(query) : NO_PARAMS, () =>
      access.telegram.forward(access.method, { httpMethod: 'GET', query }, SMALL_ANSWERS_WHOLE),
    );
  }

  const contentType = headerValue(request, 'content-type');
  const kind = bodyKind(contentType);
  if (kind.kind === 'ambiguous') return refuse(deps, request, reply, AMBIGUOUS_BODY);
  if (kind.kind === 'multipart' || kind.kind === 'opaque') {
    return relayUpload(deps, request, reply, { query, contentType, kind, paced });
  }

  const body = await readWhole(request.raw, MAX_BUFFERED_BODY, 'drain');
  if (!body) return refuse(deps, request, reply, TOO_LARGE);
  const checked = checkBody(kind.kind, body, access.method, paced);
  if (checked.refusal) return refuse(deps, request, reply, checked.refusal);
  // Telegram reads the query too; the body wins where both name a parameter.
  const params = paced ? { ...queryParams(query), ...checked.params } : NO_PARAMS;
  return pacedRelay(deps, request, reply, params, () =>
    access.telegram.forward(
      access.method,
      { httpMethod: 'POST', query, contentType, body },
      SMALL_ANSWERS_WHOLE,
    ),
  );
}

interface StreamedBody {
  query: string;
  contentType: string | undefined;
  kind: Extract<BodyKind, { kind: 'multipart' | 'opaque' }>;
  paced: boolean;
}

/**
 * A body streamed through as it arrives (an upload, or one Telegram reads as neither
 * JSON nor a form): a multipart body is read up to its chat first when the method is
 * paced, and every part is checked for a `method` field as it goes by.
 */
async function relayUpload(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  streamed: StreamedBody,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const { query, contentType, kind, paced } = streamed;
  const declared = contentLength(request);
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
  const scanner =
    kind.kind === 'multipart'
      ? new MultipartNameScanner(kind.boundary, isMethodParameter)
      : undefined;
  const openGate = () =>
    new UploadGate(source, {
      limitBytes: limit,
      inspect: scanner ? (chunk) => inspectMultipart(scanner, chunk, access.method) : undefined,
    });
  const exchange = (gate?: UploadGate) =>
    forwardStream(deps, access, { query, contentType, declared }, gate as UploadGate);
  return pacedRelay(deps, request, reply, params, exchange, { openGate, body: source });
}

function forwardStream(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  call: { query: string; contentType: string | undefined; declared: number | undefined },
  gate: UploadGate,
) {
  return access.telegram.forward(
    access.method,
    {
      httpMethod: 'POST',
      query: call.query,
      contentType: call.contentType,
      body: gate.stream,
      contentLength: call.declared,
    },
    { timeoutMs: deps.telegram.options.uploadTimeoutMs, bufferUpTo: MAX_BUFFERED_ANSWER },
  );
}

async function handleFile(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  return relay(deps, request, reply, () => access.telegram.downloadFile(access.filePath ?? ''));
}
