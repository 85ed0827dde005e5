import type { BroadcastStatus } from '@relaygram/contracts';
import type { BroadcastAction } from '@relaygram/queue';
import type { HttpAnswer } from '../http/http-answer';

/** Another client's broadcast answers as a missing one: ids are not to be probed. */
export const NO_SUCH_BROADCAST: HttpAnswer = Object.freeze({
  status: 404,
  body: { error: 'no broadcast with this id' },
});

export const BROADCASTS_UNAVAILABLE: HttpAnswer = Object.freeze({
  status: 503,
  body: { error: 'broadcasts need Redis, which does not answer; retry later' },
  headers: { 'retry-after': '1' },
});

export const BROADCAST_NOT_ALLOWED: HttpAnswer = Object.freeze({
  status: 403,
  body: {
    error:
      'forbidden: this client may not start or steer broadcasts (its config needs broadcast: true)',
  },
});

export const STILL_LOADING: HttpAnswer = Object.freeze({
  status: 409,
  body: { error: 'a broadcast with this Idempotency-Key is still being created' },
  headers: { 'retry-after': '1' },
});

/**
 * The upload stalled long enough for a repeat of its Idempotency-Key to start the
 * broadcast afresh (BROADCAST_LOADING_STALE_MS): that request's body is the one stored.
 */
export const TAKEN_OVER_ANSWER: HttpAnswer = Object.freeze({
  status: 409,
  body: {
    error:
      'another request with this Idempotency-Key took this broadcast over while this body stalled',
  },
});

const DONE_TO: Readonly<Record<BroadcastAction, string>> = {
  pause: 'paused',
  resume: 'resumed',
  cancel: 'cancelled',
};

/** A control its status does not allow: "the broadcast is done: it cannot be paused". */
export function controlConflict(action: BroadcastAction, status: BroadcastStatus): HttpAnswer {
  return {
    status: 409,
    body: { error: `the broadcast is ${status}: it cannot be ${DONE_TO[action]}` },
  };
}
