import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { hasRedirectingMethod, isMethodParameter } from '../access/method-rules';
import { accessOf, declareAccess, type GatewayAccess } from '../access/request-access';
import { registerBroadcastRoutes } from '../broadcast/broadcast.routes';
import { authHook } from '../http/auth-hook';
import { gatewayErrorHandler } from '../http/error-handler';
import { sendAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { requestFingerprint } from '../idempotency/idempotency-store';
import { handOverCall, prefersAsync, registerOutboxRoutes } from '../outbox/outbox.routes';
import type { PreparedParams } from '../uploads/multipart-call';
import { isPlainObject } from './dto/field.decorators';
import { parseForm } from './form-body';
import { authorize } from './rest-auth';
import { callTelegram, type BodyEncoding, type RestRoute } from './rest-call';
import { answerOnce, idempotencyKey, INVALID_KEY, INVALID_KEY_ANSWER } from './rest-idempotency';
import {
  fromFormFields,
  REST_OPERATIONS,
  toBotApiParams,
  type RestOperation,
} from './rest-operations';
import { rawMethodConfig, restOperationConfig } from './rest-api.docs';
import { restUpload } from './rest-upload';

export const REST_PREFIX = '/api/v1';

const FORM = 'application/x-www-form-urlencoded';
const METHOD_PARAMETER_REFUSED =
  'a "method" parameter may only repeat the method named in the path';
// Stands in for the uploaded file while the text fields are validated.
const ATTACHED_FILE = 'attached file';
const ASYNC_UPLOAD_REFUSED = Object.freeze({
  status: 400,
  body: {
    error:
      'Prefer: respond-async takes JSON or form parameters: an upload cannot wait in the outbox (send a file_id or URL)',
  },
});

const outboxUrl = (bot: string, id: string) => `${REST_PREFIX}/${bot}/outbox/${id}`;

/**
 * `POST /api/v1[/:botId]/<resource>/<action>`, `raw/:method` and the outbox, as one
 * encapsulated Fastify plugin: its body parsers (JSON, form, multipart for uploads) and
 * error handler apply to these routes only, never to the other features' routes.
 */
export function restApiRoutes(deps: GatewayRouteDeps): FastifyPluginAsync {
  return async (api) => {
    declareAccess(api);
    api.setErrorHandler(
      restErrorHandler(
        deps,
        'unsupported content type: send application/json or a form (multipart for uploads)',
      ),
    );
    api.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not found' }));

    await api.register(async (plain) => {
      installBodyParsers(plain);
      for (const op of REST_OPERATIONS.filter((o) => !o.uploadField)) {
        registerOperation(plain, { deps, op, answer: asIs });
      }
    });
    await api.register(async (uploads) => {
      installBodyParsers(uploads);
      await installMultipart(uploads);
      for (const op of REST_OPERATIONS.filter((o) => o.uploadField)) {
        registerOperation(uploads, { deps, op, answer: asIs });
      }
      registerRaw(uploads, { deps, answer: (result) => ({ ok: true, result }) });
    });
    // An outbox send is kept and sent later: its parameters are JSON, never a file.
    await api.register(async (outbox) => {
      outbox.removeAllContentTypeParsers();
      addJsonParser(outbox);
      outbox.setErrorHandler(
        restErrorHandler(deps, 'unsupported content type: the outbox takes application/json'),
      );
      registerOutboxRoutes(outbox, deps);
    });
    // A broadcast's body (up to a million chat ids) is streamed into Redis, never parsed whole.
    await api.register(async (broadcasts) => {
      broadcasts.removeAllContentTypeParsers();
      broadcasts.setErrorHandler(
        restErrorHandler(deps, 'unsupported content type: broadcasts take application/json'),
      );
      registerBroadcastRoutes(broadcasts, deps);
    });
  };
}

function restErrorHandler(deps: GatewayRouteDeps, unsupportedType: string) {
  return gatewayErrorHandler(deps.logger, 'gateway request failed', {
    tooLarge: { status: 413, body: { error: 'the body is too large' } },
    unsupportedType: { status: 415, body: { error: unsupportedType } },
    badRequest: (status, error) => ({ status, body: { error: error.message } }),
    internal: { status: 500, body: { error: 'internal error' } },
  });
}

const asIs = (result: unknown): unknown => result;

type RestHandler = (
  route: RestRoute,
  access: GatewayAccess,
  key: string | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>;

/** The steps every REST call shares: its access, then its Idempotency-Key, checked. */
function restHandler(route: RestRoute, handle: RestHandler) {
  return (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | FastifyReply => {
    const key = idempotencyKey(request);
    if (key === INVALID_KEY) return sendAnswer(reply, INVALID_KEY_ANSWER);
    return handle(route, accessOf(request), key, request, reply);
  };
}

function registerOperation(api: FastifyInstance, route: RestRoute & { op: RestOperation }): void {
  const onRequest = authHook(authorize(route.deps, () => route.op.method));
  const handler = restHandler(route, handleOperation);
  api.post(
    `/${route.op.path}`,
    { onRequest, config: restOperationConfig(route.op, false) },
    handler,
  );
  api.post(
    `/:botId/${route.op.path}`,
    { onRequest, config: restOperationConfig(route.op, true) },
    handler,
  );
}

function registerRaw(api: FastifyInstance, route: RestRoute): void {
  const onRequest = authHook(authorize(route.deps, (params) => params.method ?? ''));
  const handler = restHandler(route, handleRaw);
  api.post('/raw/:method', { onRequest, config: rawMethodConfig(false) }, handler);
  api.post('/:botId/raw/:method', { onRequest, config: rawMethodConfig(true) }, handler);
}

async function handleOperation(
  route: RestRoute,
  access: GatewayAccess,
  key: string | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const op = route.op as RestOperation;
  if (op.uploadField && request.isMultipart()) {
    if (prefersAsync(request)) return sendAnswer(reply, ASYNC_UPLOAD_REFUSED);
    const prepare = prepareUpload(op, op.uploadField);
    return restUpload({ route, access, key, path: op.path, prepare }, request, reply);
  }
  const encoding = bodyEncoding(request);
  const body = request.body ?? {};
  const checked = validated(
    op,
    encoding === 'form' && isPlainObject(body) ? fromFormFields(body, op) : body,
  );
  if (!checked.ok) return reply.code(checked.status).send({ error: checked.error });
  const params = checked.params;
  if (prefersAsync(request)) {
    return handOverCall(route.deps, access, reply, key, { method: op.method, params }, outboxUrl);
  }
  return answerOnce(
    route.deps,
    access,
    reply,
    key,
    () => requestFingerprint(op.path, params),
    (signal) => callTelegram(route, access, reply, params, 'json', signal),
  );
}

/** The text fields of an operation's upload, its file standing in as `uploadField`. */
function prepareUpload(op: RestOperation, uploadField: string) {
  return (fields: Record<string, unknown>, fileField: string | undefined): PreparedParams => {
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
        return { ok: false, status: 400, error: `${uploadField} is given as a field and a file` };
      }
      input[uploadField] = ATTACHED_FILE;
    }
    const checked = validated(op, input);
    if (checked.ok && fileField !== undefined) delete checked.params[uploadField];
    return checked;
  };
}

async function handleRaw(
  route: RestRoute,
  access: GatewayAccess,
  key: string | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const path = `raw/${access.method}`;
  if (request.isMultipart()) {
    if (prefersAsync(request)) return sendAnswer(reply, ASYNC_UPLOAD_REFUSED);
    const prepare = (fields: Record<string, unknown>, fileField: string | undefined) => {
      const redirects = hasRedirectingMethod(Object.entries(fields), access.method);
      if (redirects || (fileField !== undefined && isMethodParameter(fileField))) {
        return { ok: false as const, status: 400, error: METHOD_PARAMETER_REFUSED };
      }
      return { ok: true as const, params: fields };
    };
    return restUpload({ route, access, key, path, prepare }, request, reply);
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
  if (prefersAsync(request)) {
    const call = { method: access.method, params: body };
    return handOverCall(route.deps, access, reply, key, call, outboxUrl);
  }
  const encoding = bodyEncoding(request);
  return answerOnce(
    route.deps,
    access,
    reply,
    key,
    () => requestFingerprint(path, body),
    (signal) => callTelegram(route, access, reply, body, encoding, signal),
  );
}

function validated(op: RestOperation, input: unknown): PreparedParams {
  const checked = op.validate(input);
  if (!checked.ok) return { ok: false, status: 400, error: checked.problems.join('; ') };
  return { ok: true, params: toBotApiParams(checked.value) };
}

function bodyEncoding(request: FastifyRequest): BodyEncoding {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith(FORM) ? 'form' : 'json';
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
  addJsonParser(api);
  api.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
  });
}

/** Fastify's JSON parser, refusing `__proto__` and `constructor.prototype` keys. */
function addJsonParser(api: FastifyInstance): void {
  api.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    api.getDefaultJsonParser('error', 'error'),
  );
}

async function installMultipart(api: FastifyInstance): Promise<void> {
  if (api.hasRequestDecorator('isMultipart')) return;
  await api.register(fastifyMultipart, { throwFileSizeLimit: false });
}
