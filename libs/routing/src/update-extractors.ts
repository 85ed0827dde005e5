import { asObject, firstIdAt, type IdPath, type JsonObject } from './json-read';
import type { Update, UpdateType } from './update.types';

/** Where one update type keeps its actor and its chat. */
export interface UpdateTypeSpec {
  /** Paths to the acting user (or chat), tried in order. */
  readonly actor: readonly IdPath[];
  /** Paths to the chat the update belongs to, tried in order. */
  readonly chat: readonly IdPath[];
  /** Carries a Message, whose text or caption may open with a command. */
  readonly messageLike: boolean;
}

const FROM: IdPath = ['from', 'id'];
const CHAT: IdPath = ['chat', 'id'];
const USER: IdPath = ['user', 'id'];
const NONE: readonly IdPath[] = [];

const MESSAGE: UpdateTypeSpec = { actor: [FROM], chat: [CHAT], messageLike: true };
const FROM_ONLY: UpdateTypeSpec = { actor: [FROM], chat: NONE, messageLike: false };
const MEMBER_CHANGE: UpdateTypeSpec = { actor: [FROM], chat: [CHAT], messageLike: false };
const CHAT_ONLY: UpdateTypeSpec = { actor: NONE, chat: [CHAT], messageLike: false };
const USER_ONLY: UpdateTypeSpec = { actor: [USER], chat: NONE, messageLike: false };

/**
 * SPEC section 4: the actor is `from` of the carried object unless the type says
 * otherwise. A Record over UpdateType, so adding a type to UPDATE_TYPES without an
 * entry here does not compile.
 */
const SPECS: { readonly [T in UpdateType]: UpdateTypeSpec } = {
  // Channel posts usually have no `from` (the channel is `sender_chat`); they are
  // laned and matched by their chat.
  message: MESSAGE,
  edited_message: MESSAGE,
  channel_post: MESSAGE,
  edited_channel_post: MESSAGE,
  // `user_chat_id` is the private chat between the bot and the connecting user: the
  // chat this update is about, so it shares a lane (and `chat_ids` rules) with that
  // user's messages to the bot.
  business_connection: { actor: [USER], chat: [['user_chat_id']], messageLike: false },
  business_message: MESSAGE,
  edited_business_message: MESSAGE,
  deleted_business_messages: CHAT_ONLY,
  // Anonymous admins react as the chat they speak for.
  message_reaction: {
    actor: [USER, ['actor_chat', 'id']],
    chat: [CHAT],
    messageLike: false,
  },
  message_reaction_count: CHAT_ONLY,
  inline_query: FROM_ONLY,
  chosen_inline_result: FROM_ONLY,
  // A button under an inline message comes with `inline_message_id` and no message,
  // hence no chat. An inaccessible message still carries its chat.
  callback_query: { actor: [FROM], chat: [['message', 'chat', 'id']], messageLike: false },
  shipping_query: FROM_ONLY,
  pre_checkout_query: FROM_ONLY,
  purchased_paid_media: FROM_ONLY,
  poll: { actor: NONE, chat: NONE, messageLike: false },
  // An anonymous vote names the chat the voter voted as instead of a user; that chat is
  // the actor, not the chat the poll is in (the update does not say which that is).
  poll_answer: { actor: [USER, ['voter_chat', 'id']], chat: NONE, messageLike: false },
  my_chat_member: MEMBER_CHANGE,
  chat_member: MEMBER_CHANGE,
  chat_join_request: MEMBER_CHANGE,
  // The booster is known for premium and gift-code boosts; an unclaimed giveaway boost
  // has no user.
  chat_boost: { actor: [['boost', 'source', 'user', 'id']], chat: [CHAT], messageLike: false },
  removed_chat_boost: { actor: [['source', 'user', 'id']], chat: [CHAT], messageLike: false },
  guest_message: MESSAGE,
  stopped_message_generation: CHAT_ONLY,
  managed_bot: USER_ONLY,
  subscription: USER_ONLY,
};

/**
 * A type newer than this code: most Bot API update objects name their actor `from` and
 * their chat `chat`, so `user_ids`/`chat_ids` rules and `chat` lanes use those when the
 * carried object has them. Commands stay with the types known to carry a Message.
 */
const UNKNOWN_TYPE: UpdateTypeSpec = { actor: [FROM], chat: [CHAT], messageLike: false };

// A Map rather than the object itself: a hostile update type such as `constructor` or
// `__proto__` must not find something on Object.prototype.
const SPEC_BY_TYPE: ReadonlyMap<string, UpdateTypeSpec> = new Map(Object.entries(SPECS));

export function specOf(type: string | undefined): UpdateTypeSpec | undefined {
  return type === undefined ? undefined : (SPEC_BY_TYPE.get(type) ?? UNKNOWN_TYPE);
}

/**
 * The update type: the first key other than `update_id` (in JavaScript property order,
 * which for parsed JSON is the order in the body, integer-like keys first) whose value
 * is a JSON object. Telegram sends exactly one such key; a key holding null, an array
 * or a primitive is not a payload and is skipped. Undefined when there is none.
 */
export function updateType(update: Update): string | undefined {
  if (asObject(update) === undefined) return undefined;
  for (const key in update) {
    if (key !== 'update_id' && Object.hasOwn(update, key) && asObject(update[key]) !== undefined) {
      return key;
    }
  }
  return undefined;
}

/** The object carried under `type` (as found by `updateType`). */
export function payloadOf(update: Update, type: string): JsonObject | undefined {
  return asObject(update[type]);
}

export function actorIdOf(spec: UpdateTypeSpec, payload: JsonObject): number | undefined {
  return firstIdAt(payload, spec.actor);
}

export function chatIdOf(spec: UpdateTypeSpec, payload: JsonObject): number | undefined {
  return firstIdAt(payload, spec.chat);
}

export function callbackDataOf(type: string, payload: JsonObject): string | undefined {
  if (type !== 'callback_query') return undefined;
  const data = payload.data;
  return typeof data === 'string' ? data : undefined;
}

/** The user (or, for anonymous reactions and votes, the chat) that caused the update. */
export function actorId(update: Update): number | undefined {
  const type = updateType(update);
  const spec = specOf(type);
  if (spec === undefined || type === undefined) return undefined;
  const payload = payloadOf(update, type);
  return payload === undefined ? undefined : actorIdOf(spec, payload);
}

/** The chat the update belongs to, when its type has one. */
export function chatId(update: Update): number | undefined {
  const type = updateType(update);
  const spec = specOf(type);
  if (spec === undefined || type === undefined) return undefined;
  const payload = payloadOf(update, type);
  return payload === undefined ? undefined : chatIdOf(spec, payload);
}

/** `callback_query.data`, when the update is a callback query that has it. */
export function callbackData(update: Update): string | undefined {
  const type = updateType(update);
  if (type === undefined) return undefined;
  const payload = payloadOf(update, type);
  return payload === undefined ? undefined : callbackDataOf(type, payload);
}
