/**
 * An incoming Telegram update as parsed from JSON. Only `update_id` is known to be
 * there; the one other key names the update type. Everything else is read
 * defensively, since the body came off the wire and may have any shape.
 */
export interface Update {
  readonly update_id: number;
  readonly [type: string]: unknown;
}

/**
 * Every Update type of the Bot API this code knows how to look into. Types missing
 * here are still routed (by rules that do not need to look inside them), so this list
 * only decides where actor, chat and command are read from.
 *
 * The last four came with later Bot API releases than the rest; they are appended so
 * that indexes into the older part of the list stay put.
 */
export const UPDATE_TYPES = Object.freeze([
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'business_connection',
  'business_message',
  'edited_business_message',
  'deleted_business_messages',
  'message_reaction',
  'message_reaction_count',
  'inline_query',
  'chosen_inline_result',
  'callback_query',
  'shipping_query',
  'pre_checkout_query',
  'purchased_paid_media',
  'poll',
  'poll_answer',
  'my_chat_member',
  'chat_member',
  'chat_join_request',
  'chat_boost',
  'removed_chat_boost',
  'guest_message',
  'stopped_message_generation',
  'managed_bot',
  'subscription',
] as const);

export type UpdateType = (typeof UPDATE_TYPES)[number];

const KNOWN_TYPES: ReadonlySet<string> = new Set(UPDATE_TYPES);

export function isKnownUpdateType(type: string): type is UpdateType {
  return KNOWN_TYPES.has(type);
}
