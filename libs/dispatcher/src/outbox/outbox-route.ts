import type { RelaygramConfig, RouteConfig } from '@relaygram/config';
import { OUTBOX_CONCURRENCY, OUTBOX_MAX_AGE_MS, OUTBOX_ROUTE } from '@relaygram/contracts';

/** An outbox call waits this long for Telegram's answer, as the gateway's calls do. */
export const OUTBOX_CALL_TIMEOUT_MS = 30_000;
/** The longest pause between two attempts of an outbox send (429s name their own). */
export const OUTBOX_BACKOFF_CAP_MS = 60_000;

/**
 * The outbox's internal route, beside the configured ones: its lanes (a bot and a chat
 * each) are drained by the same engine, with its own worker slots. It sends to
 * Telegram, so its target settings only say where the Bot API is; nothing is signed.
 */
export function outboxRoute(config: Pick<RelaygramConfig, 'bots' | 'telegram'>): RouteConfig {
  return {
    name: OUTBOX_ROUTE,
    bots: config.bots.map((bot) => bot.id),
    targetUrl: `${config.telegram.apiBase}/`,
    format: 'envelope',
    ordering: 'chat',
    concurrency: OUTBOX_CONCURRENCY,
    timeoutMs: OUTBOX_CALL_TIMEOUT_MS,
    signature: 'relaygram-v1',
    webhookReply: false,
    retry: {
      maxAgeMs: OUTBOX_MAX_AGE_MS,
      backoffCapMs: OUTBOX_BACKOFF_CAP_MS,
      // Telegram's 5xx are its own trouble, never the send's: retried until max age.
      maxConsecutive5xx: Number.MAX_SAFE_INTEGER,
    },
  };
}

/** The routes a dispatcher drains: the configured push routes and the outbox. */
export function drainedRoutes(
  config: Pick<RelaygramConfig, 'routes' | 'bots' | 'telegram'>,
): RouteConfig[] {
  return [...config.routes, outboxRoute(config)];
}
