import type { BotConfig, PullRouteConfig } from '@relaygram/config';
import type { TelegramClient } from '@relaygram/telegram';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayClient } from './client-directory';

/** What the auth hook established for one request, for its handler. */
export interface GatewayAccess {
  client: GatewayClient;
  bot: BotConfig;
  telegram: TelegramClient;
  /** The request's id, for the call's log lines (set by grantAccess). */
  reqId?: string;
  /** The Bot API method (getFile for drop-in downloads). */
  method: string;
  /** Drop-in only: the path as logs show it, the token masked. */
  loggedPath?: string;
  /** Drop-in downloads: the file_path after `/file/bot<id>:<token>/`. */
  filePath?: string;
  /**
   * Drop-in getUpdates, deleteWebhook and getWebhookInfo of a client that owns this pull
   * route of the bot: answered from the route's lane, never sent to Telegram.
   */
  pull?: PullRouteConfig;
}

const ACCESS = Symbol('relaygram.gatewayAccess');

type WithAccess = FastifyRequest & { [ACCESS]?: GatewayAccess | null };

/** Declares the slot once per plugin, so requests keep one shape (Fastify's advice). */
export function declareAccess(instance: FastifyInstance): void {
  if (!instance.hasRequestDecorator(ACCESS)) instance.decorateRequest(ACCESS, null);
}

export function grantAccess(request: FastifyRequest, access: GatewayAccess): void {
  // Named in the call's lines explicitly: the gateway app runs without a request context.
  access.reqId = request.id;
  (request as WithAccess)[ACCESS] = access;
}

/** The access of a request that went through the auth hook; a route without one is a bug. */
export function accessOf(request: FastifyRequest): GatewayAccess {
  const access = (request as WithAccess)[ACCESS];
  if (!access) throw new Error('gateway route reached without its auth hook');
  return access;
}

export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}
