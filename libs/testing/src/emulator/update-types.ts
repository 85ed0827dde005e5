import { UPDATE_TYPES } from '@relaygram/contracts';
import type { JsonObject, Update } from './emulator.types';

export { UPDATE_TYPES };

const KNOWN_TYPES: ReadonlySet<string> = new Set(UPDATE_TYPES);

/** What a bot receives until it asks otherwise: these three must be requested explicitly. */
export const DEFAULT_ALLOWED_UPDATES: ReadonlySet<string> = new Set(
  UPDATE_TYPES.filter(
    (t) => t !== 'chat_member' && t !== 'message_reaction' && t !== 'message_reaction_count',
  ),
);

/**
 * Reads an allowed_updates parameter the way the Bot API server does: absent, empty text or
 * not a JSON array of strings leaves the setting unchanged (`undefined`); an array naming no
 * known type, `[]` included, selects the default set.
 */
export function parseAllowedUpdates(value: unknown): ReadonlySet<string> | undefined {
  if (!Array.isArray(value)) return undefined;
  const selected = new Set<string>();
  for (const item of value) {
    if (typeof item !== 'string') return undefined;
    const name = item.toLowerCase();
    if (KNOWN_TYPES.has(name)) selected.add(name);
  }
  return selected.size === 0 ? DEFAULT_ALLOWED_UPDATES : selected;
}

/** The setting as getWebhookInfo shows it: absent when it is the default. */
export function describeAllowedUpdates(allowed: ReadonlySet<string>): string[] | undefined {
  if (allowed === DEFAULT_ALLOWED_UPDATES) return undefined;
  return UPDATE_TYPES.filter((t) => allowed.has(t));
}

export function updateType(update: Update | JsonObject): string | undefined {
  for (const key of Object.keys(update)) {
    if (key !== 'update_id') return key;
  }
  return undefined;
}

/**
 * Types this emulator does not know are always delivered: it cannot tell what Telegram would
 * do with them, and a test injecting one wants to see it arrive.
 */
export function isAllowed(type: string, allowed: ReadonlySet<string>): boolean {
  return !KNOWN_TYPES.has(type) || allowed.has(type);
}

const CHAT_KEYED = new Set([
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'business_message',
  'edited_business_message',
  'deleted_business_messages',
  'message_reaction',
  'message_reaction_count',
  'my_chat_member',
  'chat_member',
  'chat_join_request',
  'chat_boost',
  'removed_chat_boost',
]);

const USER_KEYED: Record<string, string> = {
  inline_query: 'i',
  chosen_inline_result: 'r',
  callback_query: 'q',
  shipping_query: 'p',
  pre_checkout_query: 'p',
};

/**
 * The webhook queue an update belongs to, after the Bot API server: updates of one queue are
 * sent one at a time and in order. Messages and chat events queue per chat, callback and
 * inline queries per user, polls per poll; anything else (`undefined`) goes out in parallel.
 */
export function webhookQueueKey(type: string, payload: unknown): string | undefined {
  if (!isObject(payload)) return undefined;
  if (CHAT_KEYED.has(type)) {
    const chat = payload['chat'];
    return isObject(chat) && chat['id'] !== undefined ? `c${String(chat['id'])}` : undefined;
  }
  const prefix = USER_KEYED[type];
  if (prefix) {
    const from = payload['from'];
    return isObject(from) && from['id'] !== undefined ? prefix + String(from['id']) : undefined;
  }
  if (type === 'poll') return payload['id'] !== undefined ? `o${String(payload['id'])}` : undefined;
  if (type === 'poll_answer') {
    return payload['poll_id'] !== undefined ? `o${String(payload['poll_id'])}` : undefined;
  }
  return undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null;
}
