/**
 * Fields of a bot's state hash in Redis (`RedisKeys.botState`), shared by every replica.
 * The poller lease scripts spell the `poller_*` ones too.
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
});
