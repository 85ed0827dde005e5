import type { AccessDenial } from '../access/access-check';

/** A REST error answer: `{"error": "..."}` plus Telegram's details when they exist. */
export interface RestErrorBody {
  error: string;
  error_code?: number;
  retry_after?: number;
  migrate_to_chat_id?: number;
}

/** The one Telegram-style body REST sends: reserved methods look the same on every path. */
export interface TelegramStyleBody {
  ok: false;
  error_code: number;
  description: string;
}

export interface RestAnswer {
  status: number;
  body: RestErrorBody | TelegramStyleBody;
  headers?: Record<string, string>;
}

export const RESERVED_BY_GATEWAY: TelegramStyleBody = Object.freeze({
  ok: false,
  error_code: 403,
  description: 'Forbidden: reserved by the gateway',
});

export const METHOD_NAME_RULE = 'invalid Bot API method name: it must match ^[A-Za-z]+$';

export function restDenial(denial: AccessDenial): RestAnswer {
  switch (denial.reason) {
    case 'unauthorized':
      return { status: 401, body: { error: 'unauthorized' } };
    case 'unknown-bot':
      return { status: 404, body: { error: `unknown bot "${shown(denial.botId)}"` } };
    case 'no-default-bot':
      return {
        status: 404,
        body: { error: 'no default bot is configured: name the bot, /api/v1/<botId>/...' },
      };
    case 'bot-forbidden':
      return {
        status: 403,
        body: { error: `forbidden: this client may not use bot "${denial.botId}"` },
      };
    case 'invalid-method':
      return { status: 400, body: { error: METHOD_NAME_RULE } };
    case 'reserved-method':
      return { status: 403, body: RESERVED_BY_GATEWAY };
    case 'method-forbidden':
      return {
        status: 403,
        body: { error: `forbidden: this client may not call ${denial.method}` },
      };
  }
}

/** A path segment echoed back: short, and only the characters a bot id may have. */
function shown(text: string): string {
  return text.slice(0, 64).replace(/[^a-z0-9-]/gi, '?');
}
