import { createHash, randomInt } from 'node:crypto';
import type { BotState } from './bot-state';
import type {
  CallbackUpdateOptions,
  JsonObject,
  MessageEntity,
  MessageUpdateOptions,
  TelegramChat,
  TelegramMessage,
  TelegramUser,
  Update,
} from './emulator.types';
import { unixNow } from './message-factory';
import { chatTypeOf } from './message-store';

/** The sender of group messages when a test names no user. */
const DEFAULT_GROUP_USER_ID = 100_000_001;
const COMMAND = /^\/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?/;
const MESSAGE_TYPES = new Set([
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'business_message',
  'edited_business_message',
]);

export interface PreparedUpdate {
  update: Update;
  explicitId: number | undefined;
}

/** A user's text message, with the bot_command entity Telegram adds to `/commands`. */
export function buildMessageUpdate(bot: BotState, options: MessageUpdateOptions): PreparedUpdate {
  const chatType = options.chatType ?? chatTypeOf(options.chatId);
  const user = person(
    options.userId ?? (chatType === 'private' ? options.chatId : DEFAULT_GROUP_USER_ID),
    options.firstName,
    options.username,
  );
  const chat: TelegramChat =
    chatType === 'private'
      ? { id: options.chatId, first_name: user.first_name, type: chatType }
      : {
          id: options.chatId,
          title: bot.messages.chat(options.chatId).title ?? 'Test chat',
          type: chatType,
        };
  if (chatType === 'private' && user.username) chat.username = user.username;
  bot.messages.rememberChat(chat);

  const message: TelegramMessage = {
    message_id: options.messageId ?? bot.messages.nextMessageId(chat.id),
    from: user,
    chat,
    date: unixNow(),
    text: options.text,
  };
  if (chatType === 'channel') {
    delete message.from;
    message.sender_chat = chat;
  }
  const entities = options.entities ?? commandEntities(options.text);
  if (entities) message.entities = entities;
  if (options.replyMarkup) message.reply_markup = options.replyMarkup;
  bot.messages.save(message);
  const type = chatType === 'channel' ? 'channel_post' : 'message';
  return { update: { update_id: 0, [type]: message }, explicitId: undefined };
}

/**
 * A press on an inline button under the bot's message (`messageId`, else its last message in
 * the chat, else a new one made for the occasion). The query id is remembered so that
 * answerCallbackQuery accepts it.
 */
export function buildCallbackUpdate(bot: BotState, options: CallbackUpdateOptions): PreparedUpdate {
  const user = person(options.userId, options.firstName, options.username);
  const message =
    (options.messageId !== undefined
      ? bot.messages.get(options.chatId, options.messageId)
      : bot.messages.lastFromBot(options.chatId)) ?? buttonMessage(bot, options);
  const id = callbackQueryId();
  bot.rememberCallbackQuery(id);
  const query: JsonObject = {
    id,
    from: user,
    message,
    chat_instance: chatInstance(bot.id, options.chatId),
    data: options.data,
  };
  return { update: { update_id: 0, callback_query: query }, explicitId: undefined };
}

/**
 * Checks a raw `{ <type>: {...} }` payload (an explicit update_id is kept) and lets the bot
 * know the messages and callback queries it carries, as it would have seen them.
 */
export function prepareInjectedUpdate(bot: BotState, payload: unknown): PreparedUpdate {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new TypeError('an update must be a JSON object');
  }
  const fields = payload as JsonObject;
  const explicit = fields['update_id'];
  if (explicit !== undefined && !(typeof explicit === 'number' && Number.isSafeInteger(explicit))) {
    throw new TypeError('update_id must be an integer');
  }
  const types = Object.keys(fields).filter((key) => key !== 'update_id');
  if (types.length !== 1)
    throw new TypeError('an update carries exactly one field besides update_id');
  const type = types[0] as string;
  const value = fields[type];
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`the ${type} field must be an object`);
  }
  noteContent(bot, type, value as JsonObject);
  return { update: { update_id: 0, [type]: value }, explicitId: explicit };
}

function noteContent(bot: BotState, type: string, value: JsonObject): void {
  if (MESSAGE_TYPES.has(type)) {
    const chat = value['chat'] as TelegramChat | undefined;
    if (typeof chat?.id === 'number' && typeof value['message_id'] === 'number') {
      bot.messages.rememberChat(chat);
      bot.messages.save(value as unknown as TelegramMessage);
    }
  } else if (type === 'callback_query' && typeof value['id'] === 'string') {
    bot.rememberCallbackQuery(value['id']);
  }
}

function person(id: number, firstName?: string, username?: string): TelegramUser {
  const user: TelegramUser = { id, is_bot: false, first_name: firstName ?? 'Test' };
  if (username) user.username = username;
  user.language_code = 'en';
  return user;
}

function commandEntities(text: string): MessageEntity[] | undefined {
  const match = COMMAND.exec(text);
  return match ? [{ type: 'bot_command', offset: 0, length: match[0].length }] : undefined;
}

function buttonMessage(bot: BotState, options: CallbackUpdateOptions): TelegramMessage {
  const chat = bot.messages.chat(options.chatId);
  const message: TelegramMessage = {
    message_id: options.messageId ?? bot.messages.nextMessageId(chat.id),
    from: bot.user,
    chat,
    date: unixNow(),
    text: 'Choose an option',
    reply_markup: { inline_keyboard: [[{ text: options.data, callback_data: options.data }]] },
  };
  bot.messages.save(message);
  return message;
}

/** Telegram's callback query ids are opaque 64-bit numbers in decimal. */
function callbackQueryId(): string {
  return `${randomInt(100_000_000, 999_999_999)}${randomInt(100_000_000, 999_999_999)}`;
}

/** Stable per (bot, chat), as Telegram's chat_instance is. */
function chatInstance(botId: number, chatId: number): string {
  return createHash('sha256').update(`${botId}:${chatId}`).digest().readBigInt64BE(0).toString();
}
