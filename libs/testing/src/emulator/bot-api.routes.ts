import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BotRegistry } from './bot-registry';
import type { EmulatorLimits } from './emulator.types';
import type { FileStore } from './file-store';
import type { MethodDispatcher } from './method-dispatcher';
import { readMultipart } from './multipart-upload';
import { entityTooLarge, notFound, unauthorized, type TelegramError } from './telegram-error';
import type { UploadedFile } from './uploaded-file';

export interface BotApiDeps {
  registry: BotRegistry;
  dispatcher: MethodDispatcher;
  files: FileStore;
  limits: EmulatorLimits;
}

interface MethodRoute {
  Params: { botToken: string; method: string };
  Querystring: Record<string, string | string[] | undefined>;
}

interface FileRoute {
  Params: { botToken: string; '*': string };
}

/**
 * `/bot<token>/<method>` with GET or POST and parameters in the query string, a JSON,
 * urlencoded or multipart body (the body wins over the query), and
 * `/file/bot<token>/<file_path>` for downloads, answering like api.telegram.org.
 */
export function registerBotApiRoutes(app: FastifyInstance, deps: BotApiDeps): void {
  app.route<MethodRoute>({
    method: ['GET', 'POST'],
    url: '/:botToken/:method',
    handler: (request, reply) => handleMethod(deps, request, reply),
  });
  app.get<FileRoute>('/file/:botToken/*', (request, reply) => handleDownload(deps, request, reply));
}

async function handleMethod(
  deps: BotApiDeps,
  request: FastifyRequest<MethodRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { botToken, method } = request.params;
  if (!botToken.startsWith('bot')) return sendError(reply, notFound());
  const bot = deps.registry.findByToken(botToken.slice(3));

  const rawParams = queryParams(request.query);
  let uploads: UploadedFile[] = [];
  let rejectWith: TelegramError | undefined;
  if (request.isMultipart()) {
    const limit =
      method.toLowerCase() === 'sendphoto' ? deps.limits.photoBytes : deps.limits.documentBytes;
    const multipart = await readMultipart(request, deps.files, limit);
    Object.assign(rawParams, multipart.fields);
    uploads = multipart.uploads;
    if (multipart.tooLarge) rejectWith = entityTooLarge();
  } else if (request.body !== undefined && request.body !== null) {
    Object.assign(rawParams, request.body);
  }

  try {
    const outcome = await deps.dispatcher.execute({
      bot,
      method,
      rawParams,
      via: 'http',
      signal: method.toLowerCase() === 'getupdates' ? clientGone(reply) : undefined,
      rejectWith,
    });
    if (outcome.drop) {
      reply.hijack();
      request.raw.socket.destroy();
      return reply;
    }
    return reply.code(outcome.status).send(outcome.body);
  } finally {
    if (uploads.length > 0) {
      await Promise.all(uploads.map((upload) => upload.discardUnlessAdopted()));
    }
  }
}

async function handleDownload(
  deps: BotApiDeps,
  request: FastifyRequest<FileRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { botToken } = request.params;
  if (!botToken.startsWith('bot')) return sendError(reply, notFound());
  const bot = deps.registry.findByToken(botToken.slice(3));
  if (!bot) return sendError(reply, unauthorized());
  const file = deps.files.getByPath(bot.id, request.params['*']);
  if (!file?.diskPath || file.size === undefined) return sendError(reply, notFound());
  return reply
    .header('content-type', file.mimeType ?? 'application/octet-stream')
    .header('content-length', file.size)
    .send(createReadStream(file.diskPath));
}

export function sendError(reply: FastifyReply, error: TelegramError): FastifyReply {
  return reply.code(error.code).send(error.toBody());
}

/** Telegram reads one value per parameter: of a repeated query parameter, the first. */
function queryParams(query: MethodRoute['Querystring']): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const key of Object.keys(query)) {
    const value = query[key];
    params[key] = Array.isArray(value) ? value[0] : value;
  }
  return params;
}

/** Aborted when the client disconnects before its (long-polling) answer. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
