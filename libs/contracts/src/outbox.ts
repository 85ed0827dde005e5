/**
 * The outbox (`POST /api/v1/:botId/outbox`): sends a service hands over once, which
 * the dispatcher makes through the bot's pacing, in order per chat, retried on
 * Telegram's 429, 5xx and network errors. They ride the lane engine as deliveries of
 * this internal route, one lane per bot and chat (`_outbox.<bot>.c<chat_id>`). Its
 * name has a `_`, which configured route names cannot have, so it never clashes.
 */
export const OUTBOX_ROUTE = '_outbox';

/** Drain jobs of the outbox route each dispatcher runs at once (the bots' pacing sets the rate). */
export const OUTBOX_CONCURRENCY = 32;

/** An outbox send's record (status, result or error) is kept this long after its last change. */
export const OUTBOX_RECORD_TTL_MS = 7 * 24 * 3600_000;

/** A send not made within this time (Telegram unreachable, the bot paused) ends as failed. */
export const OUTBOX_MAX_AGE_MS = 24 * 3600_000;

export type OutboxStatus = 'queued' | 'sent' | 'failed';

/** What a lane entry of the outbox route carries as its body (JSON). */
export interface OutboxCall {
  method: string;
  params: Record<string, unknown>;
}
