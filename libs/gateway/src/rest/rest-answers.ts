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
      return { status: 404, body: { error: unknownBot(denial.botId) } };
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

const BOT_ID = /^[a-z0-9-]{1,64}$/;

/** Echoes the id only when it could be one: a token pasted in its place is not repeated. */
function unknownBot(botId: string): string {
  return BOT_ID.test(botId)
    ? `unknown bot "${botId}"`
    : 'unknown bot: bot ids are 1-64 characters of a-z, 0-9 and -';
}
