import fastifyMultipart from '@fastify/multipart';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from 'fastify';
import type { Logger } from 'pino';
import { checkAccess, type BotSelector } from '../access/access-check';
import { hasRedirectingMethod, isMethodParameter } from '../access/method-rules';
import {
  accessOf,
  declareAccess,
  grantAccess,
  headerValue,
  type GatewayAccess,
} from '../access/request-access';
import { restTelegramFailure, retryDelayMs } from '../telegram/telegram-error.mapper';
import type { GatewayTelegramService } from '../telegram/gateway-telegram.service';
import { isPlainObject } from './dto/field.decorators';
import { runMultipartCall, type PreparedParams } from '../uploads/multipart-call';
import { parseForm } from './form-body';
import { restDenial, type RestAnswer } from './rest-answers';
import {
  fromFormFields,
  REST_OPERATIONS,
  toBotApiParams,
  type RestOperation,
} from './rest-operations';

export const REST_PREFIX = '/api/v1';

export interface GatewayRouteDeps {
  telegram: GatewayTelegramService;
  logger: Logger;
}

type BodyEncoding = 'json' | 'form';

interface RouteParams {
  botId?: string;
  method?: string;
}

const FORM = 'application/x-www-form-urlencoded';
const METHOD_PARAMETER_REFUSED =
  'a "method" parameter may only repeat the method named in the path';
// Stands in for the uploaded file while the text fields are validated.
const ATTACHED_FILE = 'attached file';

/**
 * `POST /api/v1[/:botId]/<resource>/<action>` and `raw/:method`, as one encapsulated
 * Fastify plugin: its body parsers (JSON, form, multipart for uploads) and error
 * handler apply to these routes only, never to the other features' routes.
 */
export function restApiRoutes(deps: GatewayRouteDeps): FastifyPluginAsync {
  return async (api) => {
    declareAccess(api);
    api.setErrorHandler(restErrorHandler(deps.logger));
    api.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not found' }));

    await api.register(async (plain) => {
      installBodyParsers(plain);
      for (const op of REST_OPERATIONS.filter((o) => !o.uploadField)) {
        registerOperation(plain, deps, op);
      }
    });
    await api.register(async (uploads) => {
      installBodyParsers(uploads);
      await installMultipart(uploads);
      for (const op of REST_OPERATIONS.filter((o) => o.uploadField)) {
        registerOperation(uploads, deps, op);
      }
      registerRaw(uploads, deps);
    });
  };
}

function registerOperation(api: FastifyInstance, deps: GatewayRouteDeps, op: RestOperation): void {
  const onRequest = authorize(deps, () => op.method);
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    handleOperation(deps, op, request, reply);
  api.post(`/${op.path}`, { onRequest }, handler);
  api.post(`/:botId/${op.path}`, { onRequest }, handler);
}

function registerRaw(api: FastifyInstance, deps: GatewayRouteDeps): void {
  const onRequest = authorize(deps, (params) => params.method ?? '');
  const handler = (request: FastifyRequest, reply: FastifyReply) => handleRaw(deps, request, reply);
  api.post('/raw/:method', { onRequest }, handler);
  api.post('/:botId/raw/:method', { onRequest }, handler);
}

/** Token, bot and method are checked before a byte of the body is read. */
function authorize(
  deps: GatewayRouteDeps,
  methodOf: (params: RouteParams) => string,
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const params = request.params as RouteParams;
    const method = methodOf(params);
    const bot: BotSelector =
      params.botId === undefined ? { by: 'default' } : { by: 'id', id: params.botId };
    const decision = checkAccess(deps.telegram.directory, {
      token: headerValue(request, 'x-service-token'),
      bot,
      method,
    });
    if (!decision.ok) {
      await send(reply, restDenial(decision));
      return;
    }
    const telegram = deps.telegram.client(decision.bot.id);
    if (!telegram) {
      // The bot was removed by a reload between the two lookups.
      await send(reply, restDenial({ ok: false, reason: 'unknown-bot', botId: decision.bot.id }));
      return;
    }
    grantAccess(request, { client: decision.client, bot: decision.bot, telegram, method });
  };
}

async function handleOperation(
  deps: GatewayRouteDeps,
  op: RestOperation,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  if (op.uploadField && request.isMultipart()) {
    const uploadField = op.uploadField;
    return multipart(
      deps,
      access,
      request,
      reply,
      (result) => result,
      (fields, fileField) => {
        if (fileField !== undefined && fileField !== uploadField) {
          return {
            ok: false,
            status: 400,
            error: `the file part must be named "${uploadField}", not "${fileField}"`,
          };
        }
        const input = fromFormFields(fields, op);
        if (fileField !== undefined) {
          if (input[uploadField] !== undefined) {
            return {
              ok: false,
              status: 400,
              error: `${uploadField} is given as a field and a file`,
            };
          }
          input[uploadField] = ATTACHED_FILE;
        }
        const checked = validated(op, input);
        if (checked.ok && fileField !== undefined) delete checked.params[uploadField];
        return checked;
      },
    );
  }
  const encoding = bodyEncoding(request);
  const body = request.body ?? {};
  const checked = validated(
    op,
    encoding === 'form' && isPlainObject(body) ? fromFormFields(body, op) : body,
  );
  if (!checked.ok) return reply.code(checked.status).send({ error: checked.error });
  return callAndAnswer(deps, access, 'json', checked.params, reply, (result) => result);
}

async function handleRaw(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const wrap = (result: unknown) => ({ ok: true, result });
  if (request.isMultipart()) {
    return multipart(deps, access, request, reply, wrap, (fields, fileField) => {
      const redirects = hasRedirectingMethod(Object.entries(fields), access.method);
      if (redirects || (fileField !== undefined && isMethodParameter(fileField))) {
        return { ok: false, status: 400, error: METHOD_PARAMETER_REFUSED };
      }
      return { ok: true, params: fields };
    });
  }
  const body = request.body ?? {};
  if (!isPlainObject(body)) {
    return reply
      .code(400)
      .send({ error: 'the body must be a JSON object of the method parameters' });
  }
  if (hasRedirectingMethod(Object.entries(body), access.method)) {
    return reply.code(400).send({ error: METHOD_PARAMETER_REFUSED });
  }
  return callAndAnswer(deps, access, bodyEncoding(request), body, reply, wrap);
}

function validated(op: RestOperation, input: unknown): PreparedParams {
  const checked = op.validate(input);
  if (!checked.ok) return { ok: false, status: 400, error: checked.problems.join('; ') };
  return { ok: true, params: toBotApiParams(checked.value) };
}

async function multipart(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: (result: unknown) => unknown,
  prepare: (fields: Record<string, unknown>, fileField: string | undefined) => PreparedParams,
): Promise<FastifyReply> {
  const outcome = await runMultipartCall(request, access.telegram, {
    method: access.method,
    limitBytes: deps.telegram.options.uploadLimitBytes,
    timeoutMs: deps.telegram.options.uploadTimeoutMs,
    prepare,
  });
  switch (outcome.kind) {
    case 'refused':
      return reply.code(outcome.status).send({ error: outcome.error });
    case 'fields-only':
      return callAndAnswer(deps, access, 'json', outcome.params, reply, answer);
    case 'done':
      logCall(deps, access, 200);
      return reply.code(200).send(answer(outcome.result));
    case 'failed':
      return sendFailure(deps, access, reply, outcome.error);
  }
}

/**
 * One Bot API call; a 429 with retry_after of at most 5 s is waited out and the call
 * made once more, unless the caller hung up meanwhile.
 */
async function callAndAnswer(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  encoding: BodyEncoding,
  params: Record<string, unknown>,
  reply: FastifyReply,
  answer: (result: unknown) => unknown,
): Promise<FastifyReply> {
  const call = () =>
    encoding === 'form'
      ? access.telegram.callUrlencoded(access.method, params)
      : access.telegram.call(access.method, params);
  let result: unknown;
  try {
    try {
      result = await call();
    } catch (error) {
      const delay = retryDelayMs(error, true);
      if (delay === undefined || callerGone(reply)) throw error;
      await sleep(delay);
      if (callerGone(reply)) throw error;
      result = await call();
    }
  } catch (error) {
    return sendFailure(deps, access, reply, error);
  }
  logCall(deps, access, 200);
  return reply.code(200).send(answer(result));
}

function sendFailure(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  error: unknown,
): FastifyReply {
  const answer = restTelegramFailure(error);
  logCall(
    deps,
    access,
    answer.status,
    answer.body.error_code,
    (answer.body as { error?: string }).error,
  );
  return send(reply, answer);
}

function send(reply: FastifyReply, answer: RestAnswer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  return reply.code(answer.status).send(answer.body);
}

function logCall(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  status: number,
  errorCode?: number,
  error?: string,
): void {
  if (status >= 500 && errorCode === undefined) {
    deps.logger.warn(
      { client: access.client.name, bot: access.bot.id, method: access.method, status, error },
      'gateway call failed',
    );
  } else if (deps.logger.isLevelEnabled('debug')) {
    deps.logger.debug(
      { client: access.client.name, bot: access.bot.id, method: access.method, status, errorCode },
      'gateway call',
    );
  }
}

function bodyEncoding(request: FastifyRequest): BodyEncoding {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith(FORM) ? 'form' : 'json';
}

function callerGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.writableEnded;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** JSON (with Fastify's prototype-poisoning checks) and forms; nothing else. */
function installBodyParsers(api: FastifyInstance): void {
  const inheritedMultipart = api.hasRequestDecorator('isMultipart');
  if (inheritedMultipart) {
    // Another plugin registered @fastify/multipart on an outer context: keep its parser.
    for (const type of ['application/json', FORM, 'text/plain']) {
      if (api.hasContentTypeParser(type)) api.removeContentTypeParser(type);
    }
  } else {
    api.removeAllContentTypeParsers();
  }
  api.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    api.getDefaultJsonParser('error', 'error'),
  );
  api.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
  });
}

async function installMultipart(api: FastifyInstance): Promise<void> {
  if (api.hasRequestDecorator('isMultipart')) return;
  await api.register(fastifyMultipart, { throwFileSizeLimit: false });
}

/**
 * A path under /api/v1 that no REST route has gets its body parsed by Nest's own parsers
 * before the 404, and those throw Nest's HttpException (`getStatus()`, no `statusCode`).
 */
function httpExceptionStatus(error: unknown): number | undefined {
  const getStatus = (error as { getStatus?: unknown }).getStatus;
  if (typeof getStatus !== 'function') return undefined;
  const status: unknown = getStatus.call(error);
  return typeof status === 'number' ? status : undefined;
}

function restErrorHandler(logger: Logger) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? httpExceptionStatus(error) ?? 500;
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
      return reply.code(413).send({ error: 'the body is too large' });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
      return reply.code(415).send({
        error: 'unsupported content type: send application/json or a form (multipart for uploads)',
      });
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: error.message });
    }
    logger.error({ err: error }, 'gateway request failed');
    return reply.code(500).send({ error: 'internal error' });
  };
}
