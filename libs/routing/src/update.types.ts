/**
 * An incoming Telegram update as parsed from JSON. Only `update_id` is known to be
 * there; the one other key names the update type. Everything else is read
 * defensively, since the body came off the wire and may have any shape.
 */
export interface Update {
  readonly update_id: number;
  readonly [type: string]: unknown;
}

export { UPDATE_TYPES, isKnownUpdateType, type UpdateType } from '@relaygram/contracts';
