import type { Readable } from 'node:stream';
import type { Secret } from '@relaygram/config';

/** `errorCode` of a TelegramCallEvent when Telegram gave no error_code. */
export const CALL_NETWORK_ERROR = 0;
export const CALL_TIMEOUT = -1;
export const CALL_ABORTED = -2;

/** One finished call, for metrics. Holds nothing secret. */
export interface TelegramCallEvent {
  /** The bot's config id. */
  botId?: string;
  /** The Bot API method; `downloadFile` for a file download. */
  method: string;
  ok: boolean;
  /**
   * Telegram's error_code (the HTTP status for forward and downloadFile);
   * 0 network error, -1 timeout, -2 aborted by the caller.
   */
  errorCode?: number;
  /** Until the complete answer for call*, until the response headers for streams. */
  durationMs: number;
}

export interface TelegramClientOptions {
  /** Bot API root, e.g. `https://api.telegram.org` or `http://10.0.0.5:8081/telegram`. */
  apiBase: string;
  token: Secret;
  /** The bot's config id, for events. */
  botId?: string;
  /** Default per-call timeout, 30 s. */
  timeoutMs?: number;
  /** Keep-alive connections to the API origin, 16 by default. */
  connections?: number;
  /** Called after every call; an exception thrown here is ignored. */
  onCall?: (event: TelegramCallEvent) => void;
}

export interface CallOptions {
  /**
   * Deadline for the complete answer (call*) or for the response headers
   * (forward, downloadFile, whose body then may idle this long between chunks).
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** forward's options when a small answer may come back read whole. */
export interface BufferingCallOptions extends CallOptions {
  /**
   * An answer whose Content-Length is at most this many bytes comes back as a Buffer
   * (BufferedResponse), read by the client: no stream to pipe or read again.
   */
  bufferUpTo: number;
}

export interface ForwardRequest {
  httpMethod: 'GET' | 'POST';
  /** The raw query string, URL-encoded, with or without its leading `?`. */
  query?: string;
  contentType?: string;
  body?: Readable | Buffer;
  contentLength?: number;
}

export interface StreamedResponse {
  statusCode: number;
  /** Telegram's content headers (content-type, content-length...), lower-cased. */
  headers: Record<string, string>;
  /** Must be read to the end or destroyed: it holds a pooled connection until then. */
  body: Readable;
}

/** A forwarded call's answer read whole (see BufferingCallOptions). */
export interface BufferedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The answer of getMe. */
export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
  can_join_groups?: boolean;
  can_read_all_group_messages?: boolean;
  supports_inline_queries?: boolean;
  can_connect_to_business?: boolean;
  has_main_web_app?: boolean;
}
