/** Private chats (user ids above 0) have a chat budget; groups and channels one more. */
export type ChatKind = 'private' | 'group';

/** The chat a call sends to, as the budgets key it: canonical digits, or `@username`. */
export interface ChatTarget {
  readonly key: string;
  readonly kind: ChatKind;
}

/** What pacing needs of one Bot API call. */
export interface CallPlan {
  /** The call sends or edits a message, so it takes a slot. */
  readonly paced: boolean;
  /** Undefined when the call names no chat (inline messages) or an unusable one. */
  readonly chat?: ChatTarget;
  /** Messages the call sends: an album or a batch forward counts each of its items. */
  readonly cost: number;
}

const NOT_PACED: CallPlan = Object.freeze({ paced: false, cost: 0 });

/** A batch (copyMessages, forwardMessages) counts at most this many sends. */
export const MAX_CALL_COST = 100;

const INTEGER_CHAT = /^-?\d{1,20}$/;
// Telegram usernames are 5-32 characters; anything that could not be one is not a chat.
const USERNAME_CHAT = /^@[A-Za-z0-9_]{1,64}$/;

/**
 * The calls flood limits apply to: everything that sends a message (send*, but not
 * sendChatAction, which shows "typing..." and sends nothing), copies or forwards one,
 * or edits one (editMessage*; the other edit* methods change topics, invite links or
 * stories). Case-insensitive, as Telegram's method names are.
 */
export function isPacedMethod(method: string): boolean {
  const lower = method.toLowerCase();
  if (lower.startsWith('send')) return lower !== 'sendchataction';
  return (
    lower.startsWith('editmessage') ||
    lower === 'copymessage' ||
    lower === 'copymessages' ||
    lower === 'forwardmessage' ||
    lower === 'forwardmessages'
  );
}

/**
 * A `chat_id` as the budgets know it. Telegram takes a number, digits as text, or
 * `@channelusername`; ids below 0 and usernames are groups, supergroups or channels,
 * ids above 0 are users. Anything else (0, a float, garbage) gets no chat budget:
 * Telegram will refuse the call itself, and the bot budget still applies.
 */
export function chatTarget(chatId: unknown): ChatTarget | undefined {
  let digits: string | undefined;
  if (typeof chatId === 'number') {
    if (!Number.isSafeInteger(chatId) || chatId === 0) return undefined;
    digits = String(chatId);
  } else if (typeof chatId === 'bigint') {
    if (chatId === 0n) return undefined;
    digits = chatId.toString();
  } else if (typeof chatId === 'string') {
    const text = chatId.trim();
    if (USERNAME_CHAT.test(text)) return { key: text.toLowerCase(), kind: 'group' };
    if (!INTEGER_CHAT.test(text)) return undefined;
    // `-00123` and `-123` are the same chat to Telegram, so to the budget too.
    const value = BigInt(text);
    if (value === 0n) return undefined;
    digits = value.toString();
  } else {
    return undefined;
  }
  return { key: digits, kind: digits.startsWith('-') ? 'group' : 'private' };
}

/**
 * How many sends the call makes: the items of an album (sendMediaGroup's `media`) or
 * of a batch (copyMessages and forwardMessages' `message_ids`), 1 otherwise. Lists may
 * come as JSON text (form and multipart bodies); one that cannot be read counts as its
 * method's largest batch, never as less than it may be.
 */
export function callCost(method: string, params: Readonly<Record<string, unknown>>): number {
  const lower = method.toLowerCase();
  if (lower === 'sendmediagroup') return listLength(params['media'], 10);
  if (lower === 'copymessages' || lower === 'forwardmessages') {
    return listLength(params['message_ids'], MAX_CALL_COST);
  }
  return 1;
}

function listLength(value: unknown, unreadable: number): number {
  let list = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value) as unknown;
    } catch {
      return unreadable;
    }
  }
  if (!Array.isArray(list)) return unreadable;
  return Math.min(Math.max(list.length, 1), MAX_CALL_COST);
}

/** The plan of a call from its method and parameters (JSON, form fields or query). */
export function planCall(method: string, params: Readonly<Record<string, unknown>>): CallPlan {
  if (!isPacedMethod(method)) return NOT_PACED;
  const chat = chatTarget(params['chat_id']);
  const cost = callCost(method, params);
  return chat ? { paced: true, chat, cost } : { paced: true, cost };
}
