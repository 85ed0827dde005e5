import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { UnknownBotError } from './bot-registry';
import {
  badRequest,
  entityTooLarge,
  internalError,
  notFound,
  TelegramError,
} from './telegram-error';

/** JSON and urlencoded bodies; uploads (multipart) have their own per-file limits. */
const BODY_LIMIT = 16 * 1024 * 1024;
export const CONTROL_PREFIX = '/_emulator';

/**
 * The emulator's Fastify instance: no logging (benchmarks push thousands of requests a
 * second through it), Telegram's error JSON for the Bot API and plain `{ error }` JSON for
 * the control API.
 */
export async function createEmulatorServer(): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: true,
    keepAliveTimeout: 75_000,
    routerOptions: { maxParamLength: 1000 },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, {});
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return done(badRequest("can't parse JSON object"), undefined);
      }
      done(null, value);
    } catch {
      done(badRequest("can't parse JSON object"), undefined);
    }
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      done(null, Object.fromEntries(new URLSearchParams(text)));
    },
  );
  // Telegram ignores a body it cannot read rather than refusing the call.
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.on('error', (error) => done(error, undefined));
    payload.on('end', () => done(null, undefined));
    payload.resume();
  });
  await app.register(fastifyMultipart, { throwFileSizeLimit: false });

  app.setNotFoundHandler((request, reply) => {
    if (request.url.startsWith(CONTROL_PREFIX)) {
      return reply.code(404).send({ error: `no route ${request.method} ${request.url}` });
    }
    return sendTelegramError(reply, notFound());
  });
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (request.url.startsWith(CONTROL_PREFIX)) return sendControlError(reply, error);
    return sendTelegramError(reply, toTelegramError(error));
  });
  return app;
}

function toTelegramError(error: FastifyError | Error): TelegramError {
  if (error instanceof TelegramError) return error;
  const status = 'statusCode' in error ? error.statusCode : undefined;
  if (status === 413) return entityTooLarge();
  if (status !== undefined && status >= 400 && status < 500) return badRequest(error.message);
  return internalError();
}

function sendTelegramError(reply: FastifyReply, error: TelegramError): FastifyReply {
  return reply.code(error.code).send(error.toBody());
}

function sendControlError(reply: FastifyReply, error: FastifyError | Error): FastifyReply {
  let status = 500;
  if (error instanceof UnknownBotError) status = 404;
  else if (error instanceof TypeError || error instanceof RangeError) status = 400;
  else if (error instanceof TelegramError) status = error.code;
  else if ('statusCode' in error && typeof error.statusCode === 'number') status = error.statusCode;
  return reply.code(status).send({ error: error.message });
}
