import type { BotIdentity } from '@relaygram/testing';
import { sleep, type AppSlot } from './app-process';
import type { ReceiverSecurity } from './audited-receiver';

export const HOOK_BOT = 'hook-bot';
export const POLL_BOT = 'poll-bot';

/**
 * The routes of the chaos install, each with a receiver of its own:
 * - `main`: every update of both bots, `chat` lanes, relaygram-v1 signatures;
 * - `strict`: the polling bot only, one lane, envelope format, Standard Webhooks;
 * - `commands`: /buy and /help of both bots, `chat` lanes, X-Service-Token, webhook replies;
 * - `spread`: every message, `none` ordering, X-Telegram-Bot-Api-Secret-Token;
 * - `side`: every update, `chat` lanes, signed, behind a TCP proxy that can cut the network.
 */
export const ROUTES = ['main', 'strict', 'commands', 'spread', 'side'] as const;
export type RouteName = (typeof ROUTES)[number];
/**
 * A route no config has at start: `reload-routes` adds it with a reload (every update
 * of both bots, `chat` lanes, signed). Its receiver and secret exist from the start.
 */
export const LATE_ROUTE = 'late';
export type ReceiverName = RouteName | typeof LATE_ROUTE;

/** A config the install can be reloaded to: the routes of the start, less some, plus `late`. */
export interface ConfigVariant {
  without?: readonly RouteName[];
  late?: boolean;
}

/** Where the install's config points: the running parts it names by URL. */
export interface ConfigTargets {
  redisUrl: string;
  apiRoot: string;
  hookBot: BotIdentity;
  pollBot: BotIdentity;
  /** The load balancer in front of the ingress slots: Telegram's webhook goes through it. */
  balancerUrl: string;
  /** The URL a route delivers to. */
  target(route: ReceiverName): string;
}

/** The config file of the install, as the routes of the start or a variant of them. */
export function configDocument(
  to: ConfigTargets,
  variant: ConfigVariant = {},
): Record<string, unknown> {
  return {
    redis: { url: to.redisUrl, prefix: 'chaos' },
    telegram: { api_base: to.apiRoot },
    bots: configBots(to),
    routes: configRoutes(to.target, variant),
    clients: [
      {
        name: 'chaos-site',
        token_env: 'CHAOS_CLIENT_TOKEN',
        bots: [HOOK_BOT, POLL_BOT],
        methods: ['sendMessage', 'getMe'],
        broadcast: true,
      },
    ],
  };
}

function configBots(to: ConfigTargets): Record<string, unknown>[] {
  return [
    {
      id: HOOK_BOT,
      token_env: 'CHAOS_HOOK_BOT_TOKEN',
      username: to.hookBot.username,
      mode: 'webhook',
      webhook: {
        url: `${to.balancerUrl}/webhooks/telegram/${HOOK_BOT}`,
        secret_token_env: 'CHAOS_HOOK_WEBHOOK_SECRET',
        max_connections: 40,
        manage: true,
      },
    },
    {
      id: POLL_BOT,
      token_env: 'CHAOS_POLL_BOT_TOKEN',
      username: to.pollBot.username,
      mode: 'polling',
      allowed_updates: ['message', 'callback_query'],
      default: true,
    },
  ];
}

function configRoutes(
  target: (route: ReceiverName) => string,
  variant: ConfigVariant,
): Record<string, unknown>[] {
  const retry = { backoff_cap: '10s' };
  return [
    {
      name: 'main',
      target_url: target('main'),
      signing_secret_env: 'CHAOS_MAIN_SIGNING_SECRET',
      ordering: 'chat',
      retry,
    },
    {
      name: 'strict',
      bots: [POLL_BOT],
      target_url: target('strict'),
      format: 'envelope',
      signing_secret_env: 'CHAOS_STRICT_SIGNING_SECRET',
      signature: 'standard-webhooks',
      ordering: 'strict',
      retry,
    },
    {
      name: 'commands',
      target_url: target('commands'),
      signing_secret_env: 'CHAOS_COMMANDS_SIGNING_SECRET',
      service_token_env: 'CHAOS_COMMANDS_SERVICE_TOKEN',
      match: { commands: ['/buy', '/help'] },
      ordering: 'chat',
      retry,
    },
    {
      name: 'spread',
      target_url: target('spread'),
      telegram_secret_token_env: 'CHAOS_SPREAD_TELEGRAM_SECRET',
      match: { update_types: ['message'] },
      ordering: 'none',
      retry,
    },
    {
      name: 'side',
      target_url: target('side'),
      signing_secret_env: 'CHAOS_SIDE_SIGNING_SECRET',
      ordering: 'chat',
      retry,
    },
    ...(variant.late
      ? [
          {
            name: LATE_ROUTE,
            target_url: target(LATE_ROUTE),
            signing_secret_env: 'CHAOS_LATE_SIGNING_SECRET',
            ordering: 'chat',
            retry,
          },
        ]
      : []),
  ].filter((route) => !variant.without?.includes(route.name as RouteName));
}

/**
 * What each receiver checks: the scheme and secret a route signs with, and the one
 * secret header value it is configured to send. `env` holds the install's secrets.
 */
export function receiverSecurity(
  route: ReceiverName,
  env: Record<string, string>,
): Omit<ReceiverSecurity, 'secrets'> {
  const signed = (signingSecret: string | undefined) => ({
    scheme: 'relaygram-v1' as const,
    signingSecret,
    allowedSecretHeaders: {},
  });
  switch (route) {
    case 'strict':
      return {
        scheme: 'standard-webhooks' as const,
        signingSecret: env.CHAOS_STRICT_SIGNING_SECRET,
        allowedSecretHeaders: {},
      };
    case 'commands':
      return {
        ...signed(env.CHAOS_COMMANDS_SIGNING_SECRET),
        allowedSecretHeaders: { 'x-service-token': env.CHAOS_COMMANDS_SERVICE_TOKEN as string },
      };
    case 'spread':
      return {
        allowedSecretHeaders: {
          'x-telegram-bot-api-secret-token': env.CHAOS_SPREAD_TELEGRAM_SECRET as string,
        },
      };
    case 'main':
      return signed(env.CHAOS_MAIN_SIGNING_SECRET);
    case 'side':
      return signed(env.CHAOS_SIDE_SIGNING_SECRET);
    case LATE_ROUTE:
      return signed(env.CHAOS_LATE_SIGNING_SECRET);
  }
}

const RELOADED = 'config reloaded from';
const RELOAD_FAILED =
  /config reload refused|failed to apply the reloaded config|config reload failed/;

/** Reads the slot's log from `offset` until the reload shows there as applied (or refused). */
export async function waitForReload(
  slot: AppSlot,
  offset: number,
  sent: number,
  timeoutMs = 20_000,
): Promise<{ slot: string; ms: number }> {
  const deadline = sent + timeoutMs;
  for (;;) {
    const text = slot.logSince(offset);
    const failed = RELOAD_FAILED.exec(text);
    if (failed) throw new Error(`${slot.name}: ${failed[0]} (see its log)`);
    if (text.includes(RELOADED)) return { slot: slot.name, ms: Date.now() - sent };
    if (Date.now() > deadline) {
      throw new Error(`${slot.name} did not log the reload within ${timeoutMs} ms of its SIGHUP`);
    }
    await sleep(50);
  }
}

/** A variant in words, for the log. */
export function describeVariant(variant: ConfigVariant): string {
  const parts = [
    ...(variant.without ?? []).map((route) => `without ${route}`),
    ...(variant.late ? [`with ${LATE_ROUTE}`] : []),
  ];
  return parts.join(', ') || 'the routes of the start';
}
