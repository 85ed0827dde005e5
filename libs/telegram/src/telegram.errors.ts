/**
 * Every error this lib throws is built from fields known to be safe (Telegram's
 * answer, error code names, host:port) and never wraps an undici or socket error as
 * `cause`: those can carry request details, and the request path holds the token.
 */

/** Telegram answered `ok: false`. The message reads `ETELEGRAM: 403 Forbidden: ...`. */
export class TelegramError extends Error {
  override readonly name = 'TelegramError';
  /** Telegram's `error_code` (the HTTP status when the answer has none). */
  readonly errorCode: number;
  readonly description: string;
  /** `parameters.retry_after`, seconds (429). */
  readonly retryAfter?: number;
  /** `parameters.migrate_to_chat_id`: the group became this supergroup. */
  readonly migrateToChatId?: number;
  readonly method: string;
  readonly httpStatus: number;

  constructor(fields: {
    method: string;
    errorCode: number;
    description: string;
    httpStatus: number;
    retryAfter?: number;
    migrateToChatId?: number;
  }) {
    super(`ETELEGRAM: ${fields.errorCode} ${fields.description}`);
    this.method = fields.method;
    this.errorCode = fields.errorCode;
    this.description = fields.description;
    this.httpStatus = fields.httpStatus;
    if (fields.retryAfter !== undefined) this.retryAfter = fields.retryAfter;
    if (fields.migrateToChatId !== undefined) this.migrateToChatId = fields.migrateToChatId;
  }
}

/**
 * Telegram could not be reached or gave no usable answer: connection refused or
 * reset, DNS, TLS, a closed client, a request body that failed, or an answer that is
 * not Bot API JSON (an HTML 502 from a proxy in front of Telegram). The last case is
 * a network error rather than a TelegramError because Telegram itself never said
 * anything; `statusCode` then holds the HTTP status. The message reads
 * `EFATAL: <reason>`.
 */
export class TelegramNetworkError extends Error {
  override readonly name = 'TelegramNetworkError';
  /** An error code name: ECONNREFUSED, UND_ERR_SOCKET, EBADANSWER, EREQUESTBODY... */
  readonly code: string;
  /** e.g. `ECONNREFUSED 127.0.0.1:8081 (connection refused)`; never a URL path. */
  readonly reason: string;
  readonly method: string;
  /** HTTP status of an answer that was not Bot API JSON. */
  readonly statusCode?: number;

  constructor(fields: { method: string; code: string; reason: string; statusCode?: number }) {
    super(`EFATAL: ${fields.reason}`);
    this.method = fields.method;
    this.code = fields.code;
    this.reason = fields.reason;
    if (fields.statusCode !== undefined) this.statusCode = fields.statusCode;
  }
}

/** No complete answer within the call's timeout. */
export class TelegramTimeoutError extends Error {
  override readonly name = 'TelegramTimeoutError';
  readonly code = 'ETIMEDOUT';
  readonly method: string;
  readonly timeoutMs: number;

  constructor(fields: { method: string; timeoutMs: number }) {
    super(`ETIMEDOUT: ${fields.method} got no answer within ${fields.timeoutMs} ms`);
    this.method = fields.method;
    this.timeoutMs = fields.timeoutMs;
  }
}

/** The caller's AbortSignal fired before the call completed. */
export class TelegramAbortError extends Error {
  override readonly name = 'TelegramAbortError';
  readonly code = 'EABORTED';
  readonly method: string;

  constructor(fields: { method: string }) {
    super(`EABORTED: ${fields.method} was aborted by the caller`);
    this.method = fields.method;
  }
}

/** A request refused before it was sent: bad method name, file path, query or params. */
export class TelegramRequestError extends Error {
  override readonly name = 'TelegramRequestError';
  readonly code = 'EREQUEST';

  constructor(message: string) {
    super(message);
  }
}
