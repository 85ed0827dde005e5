/**
 * Every Update type of the Bot API this version knows, in the order of the Update
 * object's documentation; the last four came with later releases. Types missing here
 * are still routed (by rules that do not look inside them) and may still be listed in
 * allowed_updates (with a warning, in case of a typo).
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
