/**
 * Timers and limits of the ingress feature. Production uses the defaults; tests shorten
 * them through `IngressModule.forRoot(options)`.
 */
export interface PollingOptions {
  /** getUpdates `timeout` (seconds of long polling). */
  timeoutSeconds: number;
  /** getUpdates `limit`. */
  limit: number;
  /** Poller lease TTL; renewed every third of it, and standbys try to take it as often. */
  leaseTtlMs: number;
  /** Wait after a 409 "terminated by other getUpdates request" while the lease is ours. */
  conflictBackoffMs: number;
  /** Wait after a 401/404 (the token is refused). */
  unauthorizedBackoffMs: number;
  /** First wait after a network error or a 5xx; doubles per failure up to `networkBackoffMaxMs`. */
  networkBackoffMs: number;
  networkBackoffMaxMs: number;
  /** A 409 "webhook is active" deletes the webhook at most this often. */
  deleteWebhookEveryMs: number;
  /**
   * Runs after a batch is enqueued and before its offset is saved (the crash point the
   * tests exercise). An error thrown here is handled like one from the enqueue.
   */
  afterBatchEnqueued?: (bot: string, updateIds: readonly number[]) => void | Promise<void>;
}

export interface WebhookOptions {
  /**
   * getWebhookInfo period (one replica per period, shared through Redis) for every bot,
   * over each bot's `webhook.check_every` (tests shorten it).
   */
  watchIntervalMs?: number;
  /** Retry of a failed setWebhook. */
  setRetryMs: number;
  /** How long replicas skip setWebhook with the settings another replica just sent. */
  lockTtlMs: number;
}

export interface IngressOptions {
  polling: PollingOptions;
  webhook: WebhookOptions;
  /** Retry of a failed getMe while a bot's username is not known. */
  usernameRetryMs: number;
}

export type IngressOptionsInput = {
  polling?: Partial<PollingOptions>;
  webhook?: Partial<WebhookOptions>;
  usernameRetryMs?: number;
};

export const DEFAULT_INGRESS_OPTIONS: Readonly<IngressOptions> = Object.freeze({
  polling: Object.freeze({
    timeoutSeconds: 30,
    limit: 100,
    leaseTtlMs: 15_000,
    conflictBackoffMs: 30_000,
    unauthorizedBackoffMs: 60_000,
    networkBackoffMs: 1_000,
    networkBackoffMaxMs: 30_000,
    deleteWebhookEveryMs: 60_000,
  }),
  webhook: Object.freeze({
    setRetryMs: 30_000,
    lockTtlMs: 30_000,
  }),
  usernameRetryMs: 30_000,
});

export const INGRESS_OPTIONS = Symbol('RELAYGRAM_INGRESS_OPTIONS');

export function resolveIngressOptions(input: IngressOptionsInput = {}): IngressOptions {
  return {
    polling: { ...DEFAULT_INGRESS_OPTIONS.polling, ...input.polling },
    webhook: { ...DEFAULT_INGRESS_OPTIONS.webhook, ...input.webhook },
    usernameRetryMs: input.usernameRetryMs ?? DEFAULT_INGRESS_OPTIONS.usernameRetryMs,
  };
}
