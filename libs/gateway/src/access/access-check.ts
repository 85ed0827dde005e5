import type { BotConfig } from '@relaygram/config';
import { isBotApiMethodName } from '@relaygram/telegram';
import {
  mayCallMethod,
  mayUseBot,
  type ClientDirectory,
  type GatewayClient,
} from './client-directory';
import { isReservedMethod } from './method-rules';

export type BotSelector =
  | { by: 'id'; id: string }
  | { by: 'default' }
  /** The drop-in's `/bot<numericId>:<clientToken>/`: an unknown id is a bad token. */
  | { by: 'numeric-id'; numericId: string };

export interface AccessRequest {
  token: string | undefined;
  bot: BotSelector;
  /** Undefined checks the token and the bot only (a path that names no method). */
  method: string | undefined;
}

export interface AccessGranted {
  ok: true;
  client: GatewayClient;
  bot: BotConfig;
}

export type AccessDenial =
  | { ok: false; reason: 'unauthorized' }
  | { ok: false; reason: 'unknown-bot'; botId: string }
  | { ok: false; reason: 'no-default-bot' }
  | { ok: false; reason: 'bot-forbidden'; botId: string }
  | { ok: false; reason: 'invalid-method' }
  | { ok: false; reason: 'reserved-method' }
  | { ok: false; reason: 'method-forbidden'; method: string };

const UNAUTHORIZED: AccessDenial = { ok: false, reason: 'unauthorized' };
const NO_DEFAULT_BOT: AccessDenial = { ok: false, reason: 'no-default-bot' };
const INVALID_METHOD: AccessDenial = { ok: false, reason: 'invalid-method' };
const RESERVED_METHOD: AccessDenial = { ok: false, reason: 'reserved-method' };

/**
 * Who may call what, in the order a caller should learn it: the token first (nothing
 * else is revealed to a stranger), then the bot, then the method.
 */
export function checkAccess(
  directory: ClientDirectory,
  request: AccessRequest,
): AccessGranted | AccessDenial {
  const client = directory.authenticate(request.token);
  if (!client) return UNAUTHORIZED;
  let bot: BotConfig | undefined;
  switch (request.bot.by) {
    case 'id':
      bot = directory.bot(request.bot.id);
      if (!bot) return { ok: false, reason: 'unknown-bot', botId: request.bot.id };
      break;
    case 'default':
      bot = directory.defaultBot;
      if (!bot) return NO_DEFAULT_BOT;
      break;
    case 'numeric-id':
      bot = directory.botByNumericId(request.bot.numericId);
      if (!bot) return UNAUTHORIZED;
      break;
  }
  if (!mayUseBot(client, bot.id)) return { ok: false, reason: 'bot-forbidden', botId: bot.id };
  if (request.method === undefined) return { ok: true, client, bot };
  return checkMethod(client, request.method) ?? { ok: true, client, bot };
}

/**
 * The method's part of checkAccess, for a method the path does not name: the outbox
 * reads it from the body, after the token and the bot were checked.
 */
export function checkMethod(client: GatewayClient, method: unknown): AccessDenial | undefined {
  if (!isBotApiMethodName(method)) return INVALID_METHOD;
  if (isReservedMethod(method)) return RESERVED_METHOD;
  if (!mayCallMethod(client, method)) return { ok: false, reason: 'method-forbidden', method };
  return undefined;
}
