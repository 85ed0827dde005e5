/**
 * Fields of a bot's state hash in Redis (`RedisKeys.botState`). Ingress writes them
 * (its Lua scripts included) and every process reads them for /healthz, so they are
 * named once, here: renaming one makes replicas of the old and new version disagree
 * about a bot until all run the new one.
 */
export const BotStateField = Object.freeze({
  Username: 'username',
  /** The numeric id of the token the username was learned with. */
  UsernameOf: 'username_of',
  PollerState: 'poller_state',
  PollerProblem: 'poller_problem',
  PollerSince: 'poller_since',
  WebhookInfo: 'webhook_info',
  WebhookInfoAt: 'webhook_info_at',
  WebhookInfoError: 'webhook_info_error',
  WebhookSetError: 'webhook_set_error',
  WebhookSetAt: 'webhook_set_at',
  /** Stamped by the replica that won the current getWebhookInfo period. */
  WebhookCheckedAt: 'webhook_checked_at',
} as const);

export type BotStateField = (typeof BotStateField)[keyof typeof BotStateField];

/**
 * What a bot's poller is doing, as /healthz and `relaygram_poller_state` show it; stored
 * in the `poller_state` field.
 * - polling: holds the lease and long-polls;
 * - standby: another replica holds the lease (or this one waits to take it);
 * - backoff: waiting after a network error, a 5xx, a 429 or a failed enqueue;
 * - conflict: a 409 (a webhook is set, or something outside this install polls);
 * - unauthorized: Telegram refuses the token (401/404);
 * - stopped: not polling (shut down, or the bot was removed).
 */
export type PollerState =
  'polling' | 'standby' | 'backoff' | 'conflict' | 'unauthorized' | 'stopped';

export const POLLER_STATES: readonly PollerState[] = Object.freeze([
  'polling',
  'standby',
  'backoff',
  'conflict',
  'unauthorized',
  'stopped',
]);

export function isPollerState(value: unknown): value is PollerState {
  return typeof value === 'string' && (POLLER_STATES as readonly string[]).includes(value);
}
