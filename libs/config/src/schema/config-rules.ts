import { UPDATE_TYPES } from '@relaygram/contracts';
import { RESERVED_METHODS } from '../config.types';

/** Names of bots, routes and clients: they end up in URL paths, headers and metric labels. */
export const NAME = /^[a-z0-9-]{1,64}$/;
export const NAME_RULE = 'must be 1-64 characters of a-z, 0-9 and -';

export const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
export const ENV_NAME_RULE =
  'must be the name of an environment variable: A-Z, 0-9 and _, not starting with a digit';

/** `<bot user id>:<secret part>`; the id before the colon is the bot's numeric id. */
export const BOT_TOKEN = /^(\d+):[A-Za-z0-9_-]{30,}$/;
/** What Telegram accepts as a webhook `secret_token`. */
export const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
/** Client tokens double as the secret half of drop-in Bot API URLs (`/bot<id>:<token>/`). */
export const CLIENT_TOKEN = /^[A-Za-z0-9_-]{16,}$/;
/** Header values: visible ASCII, so a token can never split or fold a header. */
export const HEADER_VALUE = /^[\x21-\x7e]+$/;
export const MIN_SIGNING_SECRET_LENGTH = 16;
export const MIN_WHSEC_BYTES = 16;

export const USERNAME = /^[A-Za-z][A-Za-z0-9_]{4,31}$/;
export const UPDATE_TYPE = /^[a-z_]{1,64}$/;
export const COMMAND = /^\/[A-Za-z0-9_]{1,32}$/;
export const METHOD = /^[A-Za-z]+$/;
export const REDIS_PREFIX = /^(?:[A-Za-z0-9_.-]{1,64}|\{[A-Za-z0-9_.-]{1,62}\})$/;

export const DURATION_RULE =
  'must be a duration like 500ms, 30s, 5m, 24h, 7d or a number of seconds';

/** Update types this version knows; others are passed on to Telegram with a warning (a newer API may have them). */
export const KNOWN_UPDATE_TYPES: readonly string[] = UPDATE_TYPES;

export function isReservedMethod(method: string): boolean {
  return RESERVED_METHODS.includes(method.toLowerCase());
}

export function isMapping<T>(value: T): value is T & Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
