import type { FastifyInstance } from 'fastify';
import type { AddBotOptions, CallbackUpdateOptions, MessageUpdateOptions } from './emulator.types';
import { CONTROL_PREFIX } from './emulator-server';
import { validateFloodLimits } from './flood-control';
import { validateFailSpec } from './forced-failures';
import type { TelegramEmulator } from './telegram-emulator';

interface BotRoute {
  Params: { bot: string };
  Querystring: { method?: string; count?: string; timeoutMs?: string };
  Body: unknown;
}

interface MessageRoute {
  Params: { bot: string; chatId: string; messageId: string };
}

/**
 * The in-process control API over HTTP, for emulators running in another process (the demo,
 * chaos suites): same features, JSON in and out, errors as `{ "error": "..." }` with 400 for
 * bad input and 404 for an unknown bot. `:bot` is a token, numeric id or username.
 */
export function registerControlRoutes(app: FastifyInstance, emulator: TelegramEmulator): void {
  const base = CONTROL_PREFIX;

  app.get(base, () => ({
    apiRoot: emulator.apiRoot,
    controlUrl: emulator.controlUrl,
    bots: emulator.bots(),
  }));
  app.post(base + '/reset', async () => {
    await emulator.reset();
    return { ok: true };
  });
  app.get<{ Querystring: { method?: string } }>(base + '/calls', (request) =>
    emulator.calls(undefined, { method: request.query.method }),
  );

  app.get(base + '/bots', () => emulator.bots());
  app.post<{ Body: unknown }>(base + '/bots', (request) =>
    emulator.addBot(asObject(request.body ?? {}, 'bot options') as AddBotOptions),
  );
  const bot = base + '/bots/:bot';
  app.get<BotRoute>(bot, (request) => emulator.bot(request.params.bot));
  registerUpdateRoutes(app, emulator, bot);
  registerCallRoutes(app, emulator, bot);
  registerFaultRoutes(app, emulator, bot);
  app.get<BotRoute>(bot + '/webhook', (request) => emulator.webhookInfo(request.params.bot));
  app.get<MessageRoute>(bot + '/chats/:chatId/messages/:messageId', (request, reply) => {
    const { chatId, messageId } = request.params;
    const message = emulator.storedMessage(request.params.bot, Number(chatId), Number(messageId));
    return message ?? reply.code(404).send({ error: 'no such message' });
  });
}

function registerUpdateRoutes(app: FastifyInstance, emulator: TelegramEmulator, bot: string) {
  app.get<BotRoute>(bot + '/updates', (request) => emulator.pendingUpdates(request.params.bot));
  app.post<BotRoute>(bot + '/updates', (request) =>
    emulator.injectUpdate(request.params.bot, request.body),
  );
  app.post<BotRoute>(bot + '/updates/message', (request) =>
    emulator.message(request.params.bot, messageOptions(request.body)),
  );
  app.post<BotRoute>(bot + '/updates/callback', (request) =>
    emulator.callback(request.params.bot, callbackOptions(request.body)),
  );
  app.put<BotRoute>(bot + '/next-update-id', (request) => {
    const updateId = asObject(request.body, 'body')['updateId'];
    if (typeof updateId !== 'number') throw new TypeError('updateId must be a number');
    emulator.setNextUpdateId(request.params.bot, updateId);
    return { ok: true };
  });
}

function registerCallRoutes(app: FastifyInstance, emulator: TelegramEmulator, bot: string) {
  app.get<BotRoute>(bot + '/sent', (request) =>
    emulator.sent(request.params.bot, { method: request.query.method }),
  );
  app.get<BotRoute>(bot + '/calls', (request) =>
    emulator.calls(request.params.bot, { method: request.query.method }),
  );
  app.get<BotRoute>(bot + '/calls/wait', async (request, reply) => {
    const { method, count, timeoutMs } = request.query;
    try {
      return await emulator.waitForCalls(request.params.bot, {
        method,
        count: count === undefined ? undefined : positiveInt(count, 'count'),
        timeoutMs: timeoutMs === undefined ? undefined : positiveInt(timeoutMs, 'timeoutMs'),
      });
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('timed out')) {
        return reply.code(408).send({ error: error.message });
      }
      throw error;
    }
  });
}

function registerFaultRoutes(app: FastifyInstance, emulator: TelegramEmulator, bot: string) {
  app.post<BotRoute>(bot + '/fail', (request) => {
    emulator.fail(request.params.bot, validateFailSpec(request.body));
    return { ok: true };
  });
  app.delete<BotRoute>(bot + '/fail', (request) => {
    emulator.clearFailures(request.params.bot);
    return { ok: true };
  });
  app.put<BotRoute>(bot + '/flood-limits', (request) => {
    emulator.setFloodLimits(request.params.bot, validateFloodLimits(request.body ?? {}));
    return { ok: true };
  });
  app.delete<BotRoute>(bot + '/flood-limits', (request) => {
    emulator.setFloodLimits(request.params.bot, null);
    return { ok: true };
  });
  app.get<BotRoute>(bot + '/flood', (request, reply) => {
    const stats = emulator.floodStats(request.params.bot);
    return stats ?? reply.code(404).send({ error: 'no flood limits are set for this bot' });
  });
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function messageOptions(body: unknown): MessageUpdateOptions {
  const options = asObject(body, 'message options');
  if (typeof options['chatId'] !== 'number') throw new TypeError('chatId must be a number');
  if (typeof options['text'] !== 'string') throw new TypeError('text must be a string');
  return options as unknown as MessageUpdateOptions;
}

function callbackOptions(body: unknown): CallbackUpdateOptions {
  const options = asObject(body, 'callback options');
  for (const key of ['chatId', 'userId']) {
    if (typeof options[key] !== 'number') throw new TypeError(`${key} must be a number`);
  }
  if (typeof options['data'] !== 'string') throw new TypeError('data must be a string');
  return options as unknown as CallbackUpdateOptions;
}

function positiveInt(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(`${name} must be a positive integer`);
  return value;
}
