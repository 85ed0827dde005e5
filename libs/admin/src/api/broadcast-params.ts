import { BROADCAST_FAILURE_REASONS, type BroadcastFailureReason } from '@relaygram/contracts';
import { badParameter, notFound, type QueryParams } from './admin-params';

const NAME = /^[a-z0-9-]{1,64}$/;
/** Broadcast ids are made by the gateway (UUIDs); anything else short and printable is looked up. */
const BROADCAST_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** How far the cross-bot list pages: each page reads offset + limit broadcasts of every bot. */
export const BROADCAST_LIST_MAX_OFFSET = 10_000;

/** A broadcast's place in a path; one that cannot exist is simply not found. */
export function broadcastRef(bot: string, id: string): { bot: string; id: string } {
  if (!NAME.test(bot) || !BROADCAST_ID.test(id)) throw notFound('broadcast', `${bot}/${id}`);
  return { bot, id };
}

/** `?offset=`: an integer from 0 to `max`, 0 when absent. */
export function offsetParam(params: QueryParams, max: number): number {
  const raw = params.offset;
  if (Array.isArray(raw)) throw badParameter('offset', 'give it once');
  if (raw === undefined || raw === '') return 0;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > max)
    throw badParameter('offset', `must be an integer from 0 to ${max}`);
  return value;
}

/** `?bot=` of the broadcasts list: a bot id, or undefined for every configured bot. */
export function botParam(params: QueryParams): string | undefined {
  const raw = params.bot;
  if (Array.isArray(raw)) throw badParameter('bot', 'give it once');
  if (raw === undefined || raw === '') return undefined;
  if (!NAME.test(raw))
    throw badParameter('bot', 'must be a name of lower-case letters, digits and dashes');
  return raw;
}

/** `?reason=` of a broadcast's failures: blocked (the default) or failed. */
export function failureReason(params: QueryParams): BroadcastFailureReason {
  const raw = params.reason;
  if (Array.isArray(raw)) throw badParameter('reason', 'give it once');
  if (raw === undefined || raw === '') return 'blocked';
  if (!(BROADCAST_FAILURE_REASONS as readonly string[]).includes(raw))
    throw badParameter('reason', `must be one of ${BROADCAST_FAILURE_REASONS.join(', ')}`);
  return raw as BroadcastFailureReason;
}
