import type { UpdateOutcome } from './outcomes';

/**
 * The delivery log: every attempt of every delivery, and every update's fan-out, kept in
 * Redis streams for at most a day (`RedisKeys.attemptLog`, `RedisKeys.updateLog`), so
 * "did my service get update X, and what did it say?" has an answer.
 */

/** Defaults of the `delivery_log` config key. */
export const DELIVERY_LOG_DEFAULTS = {
  enabled: true,
  attemptsPerRoute: 10_000,
  updatesPerBot: 10_000,
  maxAgeMs: 24 * 60 * 60 * 1000,
} as const;

/** The longest `delivery_log.max_age` allowed. */
export const DELIVERY_LOG_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** Bytes of a target's answer kept per attempt. */
export const ATTEMPT_BODY_BYTES = 512;

/** How an attempt ended: `retry` also covers a retry moved to a lane of its own. */
export const LOGGED_OUTCOMES = ['delivered', 'retry', 'dead'] as const;
export type LoggedOutcome = (typeof LOGGED_OUTCOMES)[number];

/** What ingress did with an update it accepted or dropped as a repeat. */
export type FanOutStatus = `${Exclude<UpdateOutcome, UpdateOutcome.Rejected>}`;

/** Where a delivery stands now. `unknown`: its lane and log no longer say. */
export const DELIVERY_STATES = ['queued', 'retrying', 'delivered', 'dead', 'unknown'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Filters of the attempts list: an HTTP status class, `error` (no answer), or `failed` (all but 2xx). */
export const ATTEMPT_STATUS_FILTERS = ['2xx', '3xx', '4xx', '5xx', 'error', 'failed'] as const;
export type AttemptStatusFilter = (typeof ATTEMPT_STATUS_FILTERS)[number];

/** One logged attempt. */
export interface LoggedAttempt {
  /** The stream entry id: a cursor, and the attempt's order. */
  readonly id: string;
  /** When the attempt ended (ms since epoch). */
  readonly at: number;
  readonly deliveryId: string;
  readonly updateId: number;
  readonly bot: string;
  readonly route: string;
  /** 1 for the first attempt of the delivery. */
  readonly attempt: number;
  readonly outcome: LoggedOutcome;
  /** The target's HTTP status, or null when it gave none. */
  readonly status: number | null;
  /** The error kind when there was no answer (`timeout`, `ECONNREFUSED`, ...), else null. */
  readonly error: string | null;
  readonly durationMs: number;
  /** The answer's first ATTEMPT_BODY_BYTES bytes, as text ('' for none). */
  readonly body: string;
  /** For `retry`: when the next attempt is due (ms). */
  readonly nextAttemptAt: number | null;
}

/** One delivery of a traced update. */
export interface TracedDelivery {
  readonly route: string;
  readonly deliveryId: string;
  readonly state: DeliveryState;
  /** For `retrying`: when the next attempt is due (ms). */
  readonly nextAttemptAt: number | null;
  /** Oldest first. */
  readonly attempts: readonly LoggedAttempt[];
}

/** An update found in the delivery log. */
export interface UpdateTrace {
  readonly bot: string;
  readonly updateId: number;
  /**
   * How ingress met it first: `queued` (with deliveries), `ignored` (no route matched),
   * or `duplicate` (its first arrival has left the log).
   */
  readonly status: FanOutStatus;
  /** When ingress first met it (ms). */
  readonly receivedAt: number;
  /** When Telegram handed it over again and it was dropped as a duplicate (ms). */
  readonly duplicatesAt: readonly number[];
  readonly deliveries: readonly TracedDelivery[];
}

export interface AttemptQuery {
  readonly status?: AttemptStatusFilter;
  /** Only attempts at or after this time (ms). */
  readonly since?: number;
  /** Only attempts before this time (ms). */
  readonly until?: number;
  /** `nextCursor` of the page before. */
  readonly cursor?: string;
  /** 1-200, default 50. */
  readonly limit?: number;
}

/** Newest first. */
export interface AttemptPage {
  readonly attempts: readonly LoggedAttempt[];
  readonly nextCursor: string | null;
}
