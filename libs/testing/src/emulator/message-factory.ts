import type { BotState } from './bot-state';
import type { JsonObject, MessageEntity, TelegramChat, TelegramMessage } from './emulator.types';
import { badRequest } from './telegram-error';
import {
  boolParam,
  chatIdParam,
  intParam,
  objectParam,
  stringParam,
  type TelegramParams,
} from './telegram-params';

export const MAX_TEXT_LENGTH = 4096;
export const MAX_CAPTION_LENGTH = 1024;
const PARSE_MODES = new Set(['html', 'markdown', 'markdownv2']);

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/** The chat a method's chat_id names, as the bot sees it. */
export function targetChat(bot: BotState, params: TelegramParams, name = 'chat_id'): TelegramChat {
  return bot.messages.resolveChat(chatIdParam(params, name));
}

/** A new message from the bot in `chat`, stored so it can be edited, deleted or forwarded. */
export function postBotMessage(
  bot: BotState,
  chat: TelegramChat,
  content: Partial<TelegramMessage>,
): TelegramMessage {
  const message: TelegramMessage = {
    message_id: bot.messages.nextMessageId(chat.id),
    from: bot.user,
    chat,
    date: unixNow(),
    ...content,
  };
  if (chat.type === 'channel') {
    delete message.from;
    message.sender_chat = chat;
  }
  bot.messages.save(message);
  return message;
}

/**
 * The message's text or caption options. Formatting is recorded, not rendered: the text is
 * kept as sent whatever parse_mode says, so HTML or Markdown stays in `text`.
 */
export function checkParseMode(params: TelegramParams): void {
  const mode = stringParam(params, 'parse_mode');
  if (mode && !PARSE_MODES.has(mode.toLowerCase())) throw badRequest('unsupported parse_mode');
}

export function requiredText(params: TelegramParams): string {
  const text = stringParam(params, 'text');
  if (text === undefined || text.trim() === '') throw badRequest('message text is empty');
  if (text.length > MAX_TEXT_LENGTH) throw badRequest('message is too long');
  return text;
}

export function entitiesParam(params: TelegramParams, name: string): MessageEntity[] | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (!Array.isArray(value)) throw badRequest(`can't parse ${name} JSON object`);
  return value as MessageEntity[];
}

/**
 * reply_markup as it appears in a Message: only inline keyboards are part of a message;
 * reply keyboards and keyboard removal act on the client and are not echoed back.
 */
export function messageMarkup(params: TelegramParams): JsonObject | undefined {
  const markup = objectParam(
    params,
    'reply_markup',
    "can't parse reply keyboard markup JSON object",
  );
  if (!markup) return undefined;
  const keyboard = markup['inline_keyboard'];
  if (keyboard === undefined) return undefined;
  if (!Array.isArray(keyboard) || !keyboard.every((row) => Array.isArray(row))) {
    throw badRequest(
      'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays',
    );
  }
  return markup;
}

/** reply_parameters, or the older reply_to_message_id, resolved to the replied message. */
export function replyTarget(
  bot: BotState,
  chat: TelegramChat,
  params: TelegramParams,
): TelegramMessage | undefined {
  const reply = objectParam(params, 'reply_parameters', "can't parse reply parameters JSON object");
  const messageId = reply ? Number(reply['message_id']) : intParam(params, 'reply_to_message_id');
  if (messageId === undefined || !Number.isInteger(messageId) || messageId <= 0) return undefined;
  const allowMissing = reply
    ? reply['allow_sending_without_reply'] === true
    : boolParam(params, 'allow_sending_without_reply');
  const target = bot.messages.get(chat.id, messageId);
  if (!target && !allowMissing) throw badRequest('message to be replied not found');
  if (!target) return undefined;
  const { reply_to_message: _nested, ...withoutNested } = target;
  return withoutNested;
}

/** The fields a forward or copy carries over: text or media with its caption. */
export function contentOf(message: TelegramMessage): Partial<TelegramMessage> {
  const content: Partial<TelegramMessage> = {};
  for (const key of ['text', 'entities', 'caption', 'caption_entities', 'photo', 'document']) {
    if (message[key] !== undefined) content[key] = message[key];
  }
  return content;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
