import type { BotState } from './bot-state';
import type { JsonObject, TelegramMessage } from './emulator.types';
import {
  checkParseMode,
  contentOf,
  entitiesParam,
  messageMarkup,
  postBotMessage,
  replyTarget,
  requiredText,
  sameJson,
  targetChat,
  unixNow,
} from './message-factory';
import type { MethodCall, MethodTable } from './method-call';
import { badRequest } from './telegram-error';
import { intParam, stringParam, type TelegramParams } from './telegram-params';

const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);

const NOT_MODIFIED =
  'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';

/** Checks run in the Bot API server's order: the content first, then the chat. */
function sendMessage({ bot, params }: MethodCall): TelegramMessage {
  const text = requiredText(params);
  checkParseMode(params);
  const chat = targetChat(bot, params);
  const content: Partial<TelegramMessage> = { text };
  const entities = entitiesParam(params, 'entities');
  if (entities) content.entities = entities;
  const markup = messageMarkup(params);
  if (markup) content.reply_markup = markup;
  const replied = replyTarget(bot, chat, params);
  if (replied) content.reply_to_message = replied;
  return postBotMessage(bot, chat, content);
}

/** The bot's own message named by chat_id + message_id, for an edit. */
function editableMessage(bot: BotState, params: TelegramParams): TelegramMessage {
  const chat = targetChat(bot, params);
  const messageId = intParam(params, 'message_id');
  const message = messageId === undefined ? undefined : bot.messages.get(chat.id, messageId);
  if (!message) throw badRequest('message to edit not found');
  if (message.from?.id !== bot.id && message.sender_chat?.id !== chat.id) {
    throw badRequest("message can't be edited");
  }
  return message;
}

function editMessageText({ bot, params }: MethodCall): TelegramMessage | boolean {
  const inline = stringParam(params, 'inline_message_id');
  const text = requiredText(params);
  checkParseMode(params);
  const entities = entitiesParam(params, 'entities');
  const markup = messageMarkup(params);
  if (inline) return true;

  const message = editableMessage(bot, params);
  if (message.text === undefined) throw badRequest('there is no text in the message to edit');
  if (
    message.text === text &&
    sameJson(message.entities, entities) &&
    sameJson(message.reply_markup, markup)
  ) {
    throw badRequest(NOT_MODIFIED);
  }
  const edited: TelegramMessage = { ...message, text, edit_date: unixNow() };
  setOrDelete(edited, 'entities', entities);
  setOrDelete(edited, 'reply_markup', markup);
  bot.messages.save(edited);
  return edited;
}

function editMessageReplyMarkup({ bot, params }: MethodCall): TelegramMessage | boolean {
  const markup = messageMarkup(params);
  if (stringParam(params, 'inline_message_id')) return true;
  const message = editableMessage(bot, params);
  if (sameJson(message.reply_markup, markup)) throw badRequest(NOT_MODIFIED);
  const edited: TelegramMessage = { ...message };
  setOrDelete(edited, 'reply_markup', markup);
  bot.messages.save(edited);
  return edited;
}

function deleteMessage({ bot, params }: MethodCall): boolean {
  const chat = targetChat(bot, params);
  const messageId = intParam(params, 'message_id');
  if (messageId === undefined || !bot.messages.delete(chat.id, messageId)) {
    throw badRequest('message to delete not found');
  }
  return true;
}

function sourceMessage(bot: BotState, params: TelegramParams, verb: string): TelegramMessage {
  const from = targetChat(bot, params, 'from_chat_id');
  const messageId = intParam(params, 'message_id');
  const message = messageId === undefined ? undefined : bot.messages.get(from.id, messageId);
  if (!message) throw badRequest(`message to ${verb} not found`);
  return message;
}

function forwardMessage({ bot, params }: MethodCall): TelegramMessage {
  const chat = targetChat(bot, params);
  const source = sourceMessage(bot, params, 'forward');
  return postBotMessage(bot, chat, {
    forward_origin: forwardOrigin(source),
    ...contentOf(source),
  });
}

function copyMessage({ bot, params }: MethodCall): { message_id: number } {
  const chat = targetChat(bot, params);
  const source = sourceMessage(bot, params, 'copy');
  checkParseMode(params);
  const content = contentOf(source);
  const caption = stringParam(params, 'caption');
  if (caption !== undefined && content.text === undefined) {
    content.caption = caption;
    const entities = entitiesParam(params, 'caption_entities');
    if (entities) content.caption_entities = entities;
    else delete content.caption_entities;
  }
  const markup = messageMarkup(params);
  if (markup) content.reply_markup = markup;
  const replied = replyTarget(bot, chat, params);
  if (replied) content.reply_to_message = replied;
  return { message_id: postBotMessage(bot, chat, content).message_id };
}

function answerCallbackQuery({ bot, params }: MethodCall): boolean {
  const id = stringParam(params, 'callback_query_id');
  if (!id || !bot.knowsCallbackQuery(id)) {
    throw badRequest('query is too old and response timeout expired or query ID is invalid');
  }
  return true;
}

function sendChatAction({ bot, params }: MethodCall): boolean {
  const action = stringParam(params, 'action');
  if (!action || !CHAT_ACTIONS.has(action)) {
    throw badRequest('wrong parameter action in request');
  }
  targetChat(bot, params);
  return true;
}

function forwardOrigin(source: TelegramMessage): JsonObject {
  if (source.chat.type === 'channel') {
    return {
      type: 'channel',
      chat: source.chat,
      message_id: source.message_id,
      date: source.date,
    };
  }
  if (source.sender_chat) {
    return { type: 'chat', sender_chat: source.sender_chat, date: source.date };
  }
  return { type: 'user', sender_user: source.from, date: source.date };
}

function setOrDelete<K extends keyof TelegramMessage>(
  message: TelegramMessage,
  key: K,
  value: TelegramMessage[K] | undefined,
): void {
  if (value === undefined) delete message[key];
  else message[key] = value;
}

export const sendMethods: MethodTable = {
  sendMessage,
  editMessageText,
  editMessageReplyMarkup,
  deleteMessage,
  forwardMessage,
  copyMessage,
  answerCallbackQuery,
  sendChatAction,
};
