/**
 * What a bot's poller is doing, as /healthz and `relaygram_poller_state` show it.
 * - polling: holds the lease and long-polls;
 * - standby: another replica holds the lease (or this one waits to take it);
 * - backoff: waiting after a network error, a 5xx, a 429 or a failed enqueue;
 * - conflict: a 409 (a webhook is set, or something outside this install polls);
 * - unauthorized: Telegram refuses the token (401/404);
 * - stopped: not polling (shut down, or the bot was removed).
 */
export type PollerState =
  'polling' | 'standby' | 'backoff' | 'conflict' | 'unauthorized' | 'stopped';

export const POLLER_STATES: readonly PollerState[] = [
  'polling',
  'standby',
  'backoff',
  'conflict',
  'unauthorized',
  'stopped',
];

export function isPollerState(value: unknown): value is PollerState {
  return typeof value === 'string' && (POLLER_STATES as readonly string[]).includes(value);
}
