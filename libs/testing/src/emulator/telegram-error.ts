import type { TelegramErrorBody } from './emulator.types';

/** A Bot API failure; the HTTP status of the answer is its error_code, as with Telegram. */
export class TelegramError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
    this.name = 'TelegramError';
  }

  toBody(): TelegramErrorBody {
    const body: TelegramErrorBody = {
      ok: false,
      error_code: this.code,
      description: this.description,
    };
    if (this.parameters) body.parameters = this.parameters;
    return body;
  }
}

export const badRequest = (what: string): TelegramError =>
  new TelegramError(400, `Bad Request: ${what}`);

export const unauthorized = (): TelegramError => new TelegramError(401, 'Unauthorized');

export const notFound = (): TelegramError => new TelegramError(404, 'Not Found');

export const conflict = (what: string): TelegramError =>
  new TelegramError(409, `Conflict: ${what}`);

export const entityTooLarge = (): TelegramError =>
  new TelegramError(413, 'Request Entity Too Large');

export const tooManyRequests = (retryAfter: number): TelegramError =>
  new TelegramError(429, `Too Many Requests: retry after ${retryAfter}`, {
    retry_after: retryAfter,
  });

export const blockedByUser = (): TelegramError =>
  new TelegramError(403, 'Forbidden: bot was blocked by the user');

export const internalError = (): TelegramError => new TelegramError(500, 'Internal Server Error');

export const WEBHOOK_ACTIVE =
  "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
export const TERMINATED_BY_GET_UPDATES =
  'terminated by other getUpdates request; make sure that only one bot instance is running';
export const TERMINATED_BY_SET_WEBHOOK = 'terminated by setWebhook request';
