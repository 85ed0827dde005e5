export enum UpdateSource {
  Webhook = 'webhook',
  Polling = 'polling',
}

/** What ingress did with one update. */
export enum UpdateOutcome {
  Queued = 'queued',
  Duplicate = 'duplicate',
  Ignored = 'ignored',
  Rejected = 'rejected',
}

/** How one delivery attempt ended. */
export enum AttemptOutcome {
  Delivered = 'delivered',
  /** Target down or misconfigured: retry without limit, the lane waits. */
  Retry = 'retry',
  /** 500, 501 and other 5xx: retry, counting toward max_consecutive_5xx. */
  RetryCounted = 'retry_counted',
  Dead = 'dead',
}

export enum DeadReason {
  Rejected = 'rejected',
  Poison = 'poison',
  Expired = 'expired',
  RouteRemoved = 'route_removed',
}

export const DEAD_REASONS: readonly DeadReason[] = Object.freeze(Object.values(DeadReason));
