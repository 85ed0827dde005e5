import { TelegramRequestError } from './telegram.errors';

const METHOD_NAME = /^[A-Za-z]+$/;
// Characters Telegram tokens use; anything else would change the meaning of the path.
const TOKEN_CHARS = /^[A-Za-z0-9:_-]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
// A query string as it arrives on the wire: no spaces, controls, fragment or non-ASCII.
const QUERY_CHARS = /^[\x21-\x22\x24-\x7e]*$/;

export interface ApiOrigin {
  /** `https://api.telegram.org`, what the connection pool talks to. */
  origin: string;
  /** Path in front of `/bot<token>`: '' or e.g. `/telegram` for a server behind a path. */
  pathPrefix: string;
  /** `host:port`, the only address detail that goes into error messages. */
  hostPort: string;
}

export function isBotApiMethodName(method: unknown): method is string {
  return typeof method === 'string' && METHOD_NAME.test(method);
}

export function assertMethodName(method: unknown): asserts method is string {
  if (!isBotApiMethodName(method)) {
    throw new TelegramRequestError('invalid Bot API method name: it must match ^[A-Za-z]+$');
  }
}

export function parseApiBase(apiBase: string): ApiOrigin {
  let url: URL;
  try {
    url = new URL(apiBase);
  } catch {
    throw new TelegramRequestError('telegram apiBase is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TelegramRequestError('telegram apiBase must be an http or https URL');
  }
  // Credentials, a query or a fragment would be silently dropped by the pool.
  if (url.username || url.password || url.search || url.hash) {
    throw new TelegramRequestError(
      'telegram apiBase must not carry credentials, a query or a fragment',
    );
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return {
    origin: url.origin,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
    hostPort: `${url.hostname}:${port}`,
  };
}

/** Refuses tokens that could not sit in a path segment as they are; never echoes them. */
export function assertTokenShape(token: string): void {
  if (!TOKEN_CHARS.test(token)) {
    throw new TelegramRequestError(
      'bot token is empty or has characters other than A-Z a-z 0-9 : _ -',
    );
  }
}

/**
 * Encodes a `file_path` from getFile for `/file/bot<token>/<file_path>`, refusing
 * anything that could climb out of the file namespace or split the request line.
 */
export function encodeFilePath(filePath: string): string {
  if (typeof filePath !== 'string' || filePath.length === 0) {
    throw new TelegramRequestError('file path must be a non-empty string');
  }
  if (filePath.startsWith('/')) {
    throw new TelegramRequestError('file path must be relative (no leading /)');
  }
  if (filePath.includes('\\')) throw new TelegramRequestError('file path must not contain \\');
  if (CONTROL_CHARS.test(filePath)) {
    throw new TelegramRequestError('file path must not contain control characters');
  }
  const segments = filePath.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new TelegramRequestError('file path must not contain empty, . or .. segments');
  }
  return segments.map((s) => encodeURIComponent(s)).join('/');
}

/** Checks a raw query string (with or without its `?`) and returns it without the `?`. */
export function normalizeQuery(query: string | undefined): string {
  if (query === undefined) return '';
  const raw = query.startsWith('?') ? query.slice(1) : query;
  if (!QUERY_CHARS.test(raw)) {
    throw new TelegramRequestError(
      'query string must be URL-encoded (no spaces, controls, # or non-ASCII)',
    );
  }
  return raw;
}
