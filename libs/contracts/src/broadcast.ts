/**
 * Broadcasts (`POST /api/v1/:botId/broadcasts`): one Bot API call sent to many chats,
 * through the bot's pacing at `outbound.broadcast_share` of its rate. The recipients are
 * a Redis list filled in chunks while the request streams in; dispatchers claim them in
 * batches, each claim a lease, so a recipient goes out once unless its process died
 * while its send was in flight (then its lease runs out and it is sent again).
 */

/** Recipients a broadcast may have. */
export const BROADCAST_MAX_RECIPIENTS = 1_000_000;

/** Recipients written to Redis per command while a broadcast's list streams in. */
export const BROADCAST_CHUNK = 1_000;

/** A broadcast's keys are kept this long after it ends (done or cancelled). */
export const BROADCAST_RECORD_TTL_MS = 7 * 24 * 3600_000;

/** A broadcast whose recipient list never finished arriving is deleted after this. */
export const BROADCAST_LOADING_TTL_MS = 3600_000;

/**
 * A loading broadcast that got no recipients for this long lost its upload (the
 * gateway died, the client went away): creating its id again starts it afresh, so a
 * client repeating its request with the same Idempotency-Key is not refused for an hour.
 */
export const BROADCAST_LOADING_STALE_MS = 30_000;

/**
 * A claimed recipient whose result is not in by then is claimed again: its process died
 * (or hung). Longer than the bot's longest pacing wait plus a Telegram call's timeout.
 */
export const BROADCAST_LEASE_MS = 60_000;

/** Sends to one recipient that met 5xx or network errors before it is counted as failed. */
export const BROADCAST_MAX_ATTEMPTS = 8;

/** Recipients one dispatcher has in flight at once, over every broadcast it serves. */
export const BROADCAST_CONCURRENCY = 64;

export type BroadcastStatus = 'loading' | 'running' | 'paused' | 'cancelled' | 'done';

/** Why a recipient was not sent: 403 from Telegram (blocked, kicked, deactivated), or any other refusal. */
export type BroadcastFailureReason = 'blocked' | 'failed';

export const BROADCAST_FAILURE_REASONS: readonly BroadcastFailureReason[] = Object.freeze([
  'blocked',
  'failed',
]);

/** The call every recipient gets: its parameters without `chat_id`, which each recipient's is. */
export interface BroadcastCall {
  method: string;
  params: Record<string, unknown>;
}
