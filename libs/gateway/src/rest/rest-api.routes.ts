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
import { outboundOf } from '@relaygram/config';
import type { PaceResult } from '@relaygram/pacing';
import { TelegramError } from '@relaygram/telegram';
import {
  isValidIdempotencyKey,
  requestFingerprint,
  type Claim,
  type IdempotencyStore,
  type OwnedKey,
  type StoredAnswer,
} from '../idempotency/idempotency-store';
import { pacedRefusal, type GatewayPacing } from '../pacing/gateway-pacing.service';
import { restTelegramFailure, retryDelayMs } from '../telegram/telegram-error.mapper';
import type { GatewayTelegramService } from '../telegram/gateway-telegram.service';
import type { PullUpdatesService } from '../pull/pull-updates.service';
import { isPlainObject } from './dto/field.decorators';
import { runMultipartCall, type EarlyAnswer, type PreparedParams } from '../uploads/multipart-call';
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
  pull: PullUpdatesService;
  pacing: GatewayPacing;
  idempotency: IdempotencyStore;
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
  const key = idempotencyKey(request);
  if (key === INVALID_KEY) return reply.code(400).send({ error: INVALID_KEY_MESSAGE });
  if (op.uploadField && request.isMultipart()) {
    const uploadField = op.uploadField;
    return multipart(
      deps,
      access,
      request,
      reply,
      { key, path: op.path },
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
  const params = checked.params;
  return answerOnce(deps, access, reply, key, requestFingerprint(op.path, params), (signal) =>
    callTelegram(deps, access, 'json', params, reply, signal, (result) => result),
  );
}

async function handleRaw(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const key = idempotencyKey(request);
  if (key === INVALID_KEY) return reply.code(400).send({ error: INVALID_KEY_MESSAGE });
  const wrap = (result: unknown) => ({ ok: true, result });
  const path = `raw/${access.method}`;
  if (request.isMultipart()) {
    return multipart(deps, access, request, reply, { key, path }, wrap, (fields, fileField) => {
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
  const encoding = bodyEncoding(request);
  return answerOnce(deps, access, reply, key, requestFingerprint(path, body), (signal) =>
    callTelegram(deps, access, encoding, body, reply, signal, wrap),
  );
}

function validated(op: RestOperation, input: unknown): PreparedParams {
  const checked = op.validate(input);
  if (!checked.ok) return { ok: false, status: 400, error: checked.problems.join('; ') };
  return { ok: true, params: toBotApiParams(checked.value) };
}

/** An answer before it is sent; `reachedTelegram` says whether it may be replayed. */
interface CallAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  reachedTelegram: boolean;
}

const INVALID_KEY = Symbol('invalid Idempotency-Key');
const INVALID_KEY_MESSAGE = 'the Idempotency-Key header must be 1-255 printable ASCII characters';

function idempotencyKey(request: FastifyRequest): string | undefined | typeof INVALID_KEY {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  return typeof value === 'string' && isValidIdempotencyKey(value) ? value : INVALID_KEY;
}

/**
 * Runs a call once per Idempotency-Key (Stripe's semantics, see IdempotencyStore): the
 * first runs it and keeps its answer if Telegram was reached; a repeat gets that answer
 * again, marked `Idempotent-Replayed: true`; without a key the call just runs.
 */
async function answerOnce(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  key: string | undefined,
  fingerprint: string,
  run: (signal: CallerSignal) => Promise<CallAnswer>,
): Promise<FastifyReply> {
  const signal = callerSignal(reply);
  if (key === undefined) return sendCall(reply, await run(signal));
  const claim = await beginKey(deps, access, key, fingerprint, signal);
  if (claim.kind === 'replay') return sendStored(reply, claim.answer, true);
  if (claim.kind !== 'proceed') return sendEarly(reply, claimAnswer(claim));
  let answer: CallAnswer;
  try {
    answer = await run(signal);
  } catch (error) {
    await claim.release();
    throw error;
  }
  const stored = toStored(answer);
  if (answer.reachedTelegram) await claim.complete(stored);
  else await claim.release();
  return sendStored(reply, stored, false);
}

function beginKey(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  key: string,
  fingerprint: string,
  signal: CallerSignal,
): Promise<Claim> {
  const options = deps.telegram.options;
  const maxWaitMs = outboundOf(access.bot).maxWaitMs;
  return deps.idempotency.begin(
    { client: access.client.name, bot: access.bot.id, key },
    fingerprint,
    {
      waitMs: maxWaitMs,
      // Longer than the first request can take: its wait, an upload and a retried call.
      leaseMs: maxWaitMs + options.uploadTimeoutMs + 2 * options.telegramTimeoutMs + 10_000,
      signal,
    },
  );
}

function claimAnswer(claim: Exclude<Claim, OwnedKey>): EarlyAnswer {
  switch (claim.kind) {
    case 'replay':
      // Stored as JSON text made by JSON.stringify: parsed and sent again, the same bytes.
      return {
        status: claim.answer.status,
        body: JSON.parse(claim.answer.body) as unknown,
        headers: { ...claim.answer.headers, 'idempotent-replayed': 'true' },
      };
    case 'mismatch':
      return {
        status: 422,
        body: {
          error:
            'this Idempotency-Key was already used with another request; use a new key for a new request',
        },
      };
    case 'in-progress':
      return {
        status: 409,
        body: { error: 'a request with this Idempotency-Key is still running; retry later' },
        headers: { 'retry-after': '1' },
      };
    case 'unavailable':
      return {
        status: 503,
        body: { error: 'Idempotency-Key needs Redis, which does not answer; retry later' },
        headers: { 'retry-after': '1' },
      };
  }
}

function toStored(answer: CallAnswer): StoredAnswer {
  return {
    status: answer.status,
    ...(answer.headers ? { headers: answer.headers } : {}),
    body: JSON.stringify(answer.body),
  };
}

function sendEarly(reply: FastifyReply, answer: EarlyAnswer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  return reply.code(answer.status).send(answer.body);
}

function sendStored(reply: FastifyReply, stored: StoredAnswer, replayed: boolean): FastifyReply {
  if (stored.headers) reply.headers(stored.headers);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
}

function sendCall(reply: FastifyReply, answer: CallAnswer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  return reply.code(answer.status).send(answer.body);
}

async function multipart(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  request: FastifyRequest,
  reply: FastifyReply,
  idempotency: { key: string | undefined; path: string },
  answer: (result: unknown) => unknown,
  prepare: (fields: Record<string, unknown>, fileField: string | undefined) => PreparedParams,
): Promise<FastifyReply> {
  const signal = callerSignal(reply);
  let owned: OwnedKey | undefined;
  let pace: PaceResult | undefined;
  const outcome = await runMultipartCall(request, access.telegram, {
    method: access.method,
    limitBytes: deps.telegram.options.uploadLimitBytes,
    timeoutMs: deps.telegram.options.uploadTimeoutMs,
    prepare,
    admit: async (params, file) => {
      if (idempotency.key !== undefined) {
        const fingerprint = requestFingerprint(idempotency.path, { params, file });
        const claim = await beginKey(deps, access, idempotency.key, fingerprint, signal);
        if (claim.kind !== 'proceed') return claimAnswer(claim);
        owned = claim;
      }
      pace = await deps.pacing.pace(access.bot, access.method, params, signal);
      const refusal = paceRefusal(access, pace);
      if (refusal) {
        await owned?.release();
        owned = undefined;
        return { status: refusal.status, body: refusal.body, headers: refusal.headers };
      }
      return undefined;
    },
  });
  switch (outcome.kind) {
    case 'refused':
      await owned?.release();
      return reply.code(outcome.status).send({ error: outcome.error });
    case 'answered':
      return sendEarly(reply, outcome.answer);
    case 'fields-only': {
      const params = outcome.params;
      return answerOnce(
        deps,
        access,
        reply,
        idempotency.key,
        requestFingerprint(idempotency.path, params),
        (fieldsSignal) => callTelegram(deps, access, 'json', params, reply, fieldsSignal, answer),
      );
    }
    case 'done': {
      logCall(deps, access, 200);
      const done: CallAnswer = { status: 200, body: answer(outcome.result), reachedTelegram: true };
      return finishOwned(reply, owned, done);
    }
    case 'failed': {
      if (pace?.kind === 'go') await reportTelegram429(deps, access, pace, outcome.error);
      return finishOwned(reply, owned, failure(deps, access, outcome.error));
    }
  }
}

async function finishOwned(
  reply: FastifyReply,
  owned: OwnedKey | undefined,
  answer: CallAnswer,
): Promise<FastifyReply> {
  if (!owned) return sendCall(reply, answer);
  const stored = toStored(answer);
  await owned.complete(stored);
  return sendStored(reply, stored, false);
}

/** A paced call with no slot: Telegram's own 429, as REST shows Telegram's errors. */
function paceRefusal(access: GatewayAccess, pace: PaceResult): CallAnswer | undefined {
  if (pace.kind === 'refused') {
    return {
      ...restTelegramFailure(pacedRefusal(access.method, pace.retryAfter)),
      reachedTelegram: false,
    };
  }
  if (pace.kind === 'aborted') {
    return { status: 503, body: { error: 'the caller went away' }, reachedTelegram: false };
  }
  return undefined;
}

async function reportTelegram429(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  pace: Extract<PaceResult, { kind: 'go' }>,
  error: unknown,
): Promise<void> {
  if (error instanceof TelegramError && error.errorCode === 429) {
    await deps.pacing.telegram429(access.bot, pace.plan, error.retryAfter);
  }
}

/**
 * One Bot API call, after its slot. A 429 from Telegram pauses what it hit for every
 * replica; one with retry_after of at most 5 s is waited out (through the pacer, so
 * the wait is the pause) and the call made once more, unless the caller hung up.
 */
async function callTelegram(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  encoding: BodyEncoding,
  params: Record<string, unknown>,
  reply: FastifyReply,
  signal: CallerSignal,
  answer: (result: unknown) => unknown,
): Promise<CallAnswer> {
  let pace = await deps.pacing.pace(access.bot, access.method, params, signal);
  const refusal = paceRefusal(access, pace);
  if (refusal) {
    logCall(deps, access, refusal.status, 429, 'paced');
    return refusal;
  }
  const call = () =>
    encoding === 'form'
      ? access.telegram.callUrlencoded(access.method, params)
      : access.telegram.call(access.method, params);
  let result: unknown;
  try {
    try {
      result = await call();
    } catch (error) {
      if (pace.kind === 'go') await reportTelegram429(deps, access, pace, error);
      const delay = retryDelayMs(error, true);
      if (delay === undefined || callerGone(reply)) throw error;
      if (pace.kind === 'go') {
        pace = await deps.pacing.pace(access.bot, access.method, params, signal);
        if (pace.kind !== 'go') throw error;
      } else {
        await sleep(delay);
      }
      if (callerGone(reply)) throw error;
      try {
        result = await call();
      } catch (again) {
        if (pace.kind === 'go') await reportTelegram429(deps, access, pace, again);
        throw again;
      }
    }
  } catch (error) {
    return failure(deps, access, error);
  }
  logCall(deps, access, 200);
  return { status: 200, body: answer(result), reachedTelegram: true };
}

function failure(deps: GatewayRouteDeps, access: GatewayAccess, error: unknown): CallAnswer {
  const answer = restTelegramFailure(error);
  logCall(
    deps,
    access,
    answer.status,
    answer.body.error_code,
    (answer.body as { error?: string }).error,
  );
  return { ...answer, reachedTelegram: true };
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

/** The caller's signal, made only for the calls that wait (most never do). */
export type CallerSignal = () => AbortSignal;

/**
 * Aborted when the caller's connection closes before its answer: a wait for it ends.
 * Made on first use, and aborted at once if the caller is already gone by then.
 */
export function callerSignal(reply: FastifyReply): CallerSignal {
  let signal: AbortSignal | undefined;
  return () => {
    if (signal) return signal;
    const controller = new AbortController();
    signal = controller.signal;
    if (reply.raw.destroyed) {
      controller.abort();
      return signal;
    }
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    return signal;
  };
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
