import { open } from 'node:fs/promises';
import type { BotState } from './bot-state';
import type { PhotoSize, TelegramChat, TelegramDocument, TelegramMessage } from './emulator.types';
import type { FileKind, StoredFile } from './file-store';
import { sniffImageSize } from './image-size';
import {
  checkParseMode,
  entitiesParam,
  MAX_CAPTION_LENGTH,
  messageMarkup,
  postBotMessage,
  replyTarget,
  targetChat,
} from './message-factory';
import type { EmulatorContext, MethodCall, MethodTable } from './method-call';
import { badRequest, entityTooLarge } from './telegram-error';
import { stringParam, type TelegramParams } from './telegram-params';
import { UploadedFile } from './uploaded-file';

/** Enough of a file's start to find a JPEG frame header past its metadata. */
const IMAGE_HEAD_BYTES = 64 * 1024;
/** Shown when an uploaded photo is not a PNG, GIF or JPEG the emulator can measure. */
const UNKNOWN_PHOTO_SIZE = { width: 800, height: 600 };

async function sendPhoto(call: MethodCall): Promise<TelegramMessage> {
  const source = fileSource(call.params, 'photo');
  const { chat, content } = mediaMessage(call);
  const file = await storeFile(call, source, 'photo');
  const photo: PhotoSize = {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    width: file.width ?? UNKNOWN_PHOTO_SIZE.width,
    height: file.height ?? UNKNOWN_PHOTO_SIZE.height,
  };
  if (file.size !== undefined) photo.file_size = file.size;
  return postBotMessage(call.bot, chat, { photo: [photo], ...content });
}

async function sendDocument(call: MethodCall): Promise<TelegramMessage> {
  const source = fileSource(call.params, 'document');
  const { chat, content } = mediaMessage(call);
  const file = await storeFile(call, source, 'document');
  const document: TelegramDocument = { file_id: file.fileId, file_unique_id: file.fileUniqueId };
  if (file.filename) document.file_name = file.filename;
  if (file.mimeType) document.mime_type = file.mimeType;
  if (file.size !== undefined) document.file_size = file.size;
  return postBotMessage(call.bot, chat, { document, ...content });
}

/** Everything but the file, checked before the file is kept. */
function mediaMessage({ bot, params }: MethodCall): {
  chat: TelegramChat;
  content: Partial<TelegramMessage>;
} {
  checkParseMode(params);
  const chat = targetChat(bot, params);
  const content: Partial<TelegramMessage> = {};
  const caption = stringParam(params, 'caption');
  if (caption !== undefined && caption !== '') {
    if (caption.length > MAX_CAPTION_LENGTH) throw badRequest('message caption is too long');
    content.caption = caption;
    const entities = entitiesParam(params, 'caption_entities');
    if (entities) content.caption_entities = entities;
  }
  const markup = messageMarkup(params);
  if (markup) content.reply_markup = markup;
  const replied = replyTarget(bot, chat, params);
  if (replied) content.reply_to_message = replied;
  return { chat, content };
}

/**
 * The file a send method names: a multipart upload (directly or as `attach://<part>`), an
 * HTTP URL (recorded, never fetched) or a file_id this bot received before.
 */
function fileSource(params: TelegramParams, kind: FileKind): UploadedFile | string {
  const value = resolveAttachment(params, params[kind]);
  if (value instanceof UploadedFile) return value;
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') throw badRequest(`there is no ${kind} in the request`);
  return text;
}

async function storeFile(
  { bot, ctx }: MethodCall,
  source: UploadedFile | string,
  kind: FileKind,
): Promise<StoredFile> {
  if (source instanceof UploadedFile) {
    const limit = kind === 'photo' ? ctx.limits.photoBytes : ctx.limits.documentBytes;
    if (source.size > limit) throw entityTooLarge();
    const size = kind === 'photo' ? sniffImageSize(await readHead(source.path)) : undefined;
    return ctx.files.addUpload(bot.id, kind, source, size);
  }
  if (/^https?:\/\//i.test(source)) {
    try {
      return ctx.files.addUrl(bot.id, kind, source);
    } catch {
      throw badRequest('wrong HTTP URL specified');
    }
  }
  return knownFile(ctx, bot, source, kind);
}

function resolveAttachment(params: TelegramParams, value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith('attach://')) {
    return params[value.slice('attach://'.length)];
  }
  return value;
}

function knownFile(
  ctx: EmulatorContext,
  bot: BotState,
  fileId: string,
  kind: FileKind,
): StoredFile {
  const file = ctx.files.get(bot.id, fileId);
  if (!file) throw badRequest('wrong file identifier/HTTP URL specified');
  if (file.kind !== kind) throw badRequest('type of file mismatch');
  return file;
}

async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(IMAGE_HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, IMAGE_HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function getFile({ bot, params, ctx }: MethodCall): Record<string, unknown> {
  const fileId = stringParam(params, 'file_id')?.trim() ?? '';
  const file = fileId === '' ? undefined : ctx.files.get(bot.id, fileId);
  if (!file) throw badRequest('invalid file_id');
  if (file.size !== undefined && file.size > ctx.limits.downloadBytes) {
    throw badRequest('file is too big');
  }
  const result: Record<string, unknown> = {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
  };
  if (file.size !== undefined) result['file_size'] = file.size;
  result['file_path'] = file.filePath;
  return result;
}

export const mediaMethods: MethodTable = { sendPhoto, sendDocument, getFile };
