import type { JsonObject } from './emulator.types';
import { badRequest } from './telegram-error';
import { UploadedFile } from './uploaded-file';

/**
 * Telegram receives every parameter as a string (query, urlencoded, multipart) or as a JSON
 * value, and reads each one by the type its method expects. Decoding the well-known ones up
 * front lets handlers and recorded calls see the same values whatever the encoding was.
 */
export type TelegramParams = Record<string, unknown>;

const INTEGER_PARAMS = new Set([
  'offset',
  'limit',
  'timeout',
  'max_connections',
  'message_id',
  'reply_to_message_id',
  'message_thread_id',
  'cache_time',
  'user_id',
]);
const CHAT_ID_PARAMS = new Set(['chat_id', 'from_chat_id']);
const BOOLEAN_PARAMS = new Set([
  'drop_pending_updates',
  'disable_notification',
  'protect_content',
  'show_alert',
  'allow_sending_without_reply',
  'disable_web_page_preview',
  'disable_content_type_detection',
  'has_spoiler',
  'show_caption_above_media',
  'remove_caption',
]);
const JSON_PARAMS = new Set([
  'reply_markup',
  'allowed_updates',
  'entities',
  'caption_entities',
  'reply_parameters',
  'link_preview_options',
  'commands',
  'scope',
]);

const INTEGER_TEXT = /^\s*-?\d+\s*$/;

export interface NormalizedParams {
  params: TelegramParams;
  hasUploads: boolean;
}

export function normalizeParams(raw: Record<string, unknown>): NormalizedParams {
  const params: TelegramParams = {};
  let hasUploads = false;
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    if (value instanceof UploadedFile) {
      hasUploads = true;
      params[key] = value;
    } else if (typeof value === 'string') {
      params[key] = decodeString(key, value);
    } else {
      params[key] = value;
    }
  }
  return { params, hasUploads };
}

function decodeString(key: string, value: string): unknown {
  if (INTEGER_PARAMS.has(key) || CHAT_ID_PARAMS.has(key)) {
    return INTEGER_TEXT.test(value) ? Number(value) : value;
  }
  if (BOOLEAN_PARAMS.has(key)) return toBool(value);
  if (JSON_PARAMS.has(key)) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      // Left as text: the handler that needs it reports Telegram's parse error.
      return value;
    }
  }
  return value;
}

/** Telegram's reading of a boolean parameter given as text. */
function toBool(value: string): boolean {
  const lower = value.trim().toLowerCase();
  return lower === 'true' || lower === '1' || lower === 'yes';
}

/** The params with uploads replaced by their summaries, for the call history. */
export function summarizeParams(params: TelegramParams, hasUploads: boolean): JsonObject {
  if (!hasUploads) return params;
  const out: JsonObject = {};
  for (const key of Object.keys(params)) {
    const value = params[key];
    out[key] = value instanceof UploadedFile ? value.summary() : value;
  }
  return out;
}

export function stringParam(params: TelegramParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof UploadedFile) return undefined;
  return JSON.stringify(value);
}

export function intParam(params: TelegramParams, name: string): number | undefined {
  const value = params[name];
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return Number(value);
  return undefined;
}

export function boolParam(params: TelegramParams, name: string): boolean {
  const value = params[name];
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return toBool(value);
  return false;
}

/** A chat_id-like parameter: a number, or `@username` for public chats. */
export function chatIdParam(params: TelegramParams, name = 'chat_id'): number | string {
  const value = params[name];
  if (value === undefined || value === null || value === '') throw badRequest(`${name} is empty`);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (INTEGER_TEXT.test(text)) return Number(text);
    if (/^@[A-Za-z0-9_]{4,32}$/.test(text)) return text;
  }
  throw badRequest('chat not found');
}

/** A JSON-serialized object parameter; `undefined` when absent. */
export function objectParam(
  params: TelegramParams,
  name: string,
  unparsable: string,
): JsonObject | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'object' && !Array.isArray(value) && !(value instanceof UploadedFile)) {
    return value as JsonObject;
  }
  throw badRequest(unparsable);
}

/** A JSON-serialized array parameter; `undefined` when absent or not an array. */
export function arrayParam(params: TelegramParams, name: string): unknown[] | undefined {
  const value = params[name];
  return Array.isArray(value) ? value : undefined;
}
