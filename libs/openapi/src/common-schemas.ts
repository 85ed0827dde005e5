import type { JsonSchema, ParameterDoc } from './route-doc';

/** Names of the security schemes both documents declare. */
export const SECURITY = Object.freeze({
  serviceToken: 'serviceToken',
  adminToken: 'adminToken',
  telegramSecret: 'telegramSecretToken',
});

export const SECURITY_SCHEMES = Object.freeze({
  [SECURITY.serviceToken]: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Token',
    description: "A client's token (`clients[].token_env`); it may use only its bots and methods.",
  },
  [SECURITY.adminToken]: {
    type: 'http',
    scheme: 'bearer',
    description: '`ADMIN_TOKEN`. Without it set, the admin API and page answer 404.',
  },
  [SECURITY.telegramSecret]: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Telegram-Bot-Api-Secret-Token',
    description: "The bot's webhook secret (`bots[].webhook.secret_token_env`), sent by Telegram.",
  },
});

/** `{"error": "..."}`: the error body of the REST, webhook and admin APIs. */
export const ERROR_BODY: JsonSchema = Object.freeze({
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' } },
});

/** Telegram's own error shape, which the drop-in and reserved methods answer with. */
export const TELEGRAM_ERROR_BODY: JsonSchema = Object.freeze({
  type: 'object',
  required: ['ok', 'error_code', 'description'],
  properties: {
    ok: { const: false },
    error_code: { type: 'integer' },
    description: { type: 'string' },
    parameters: {
      type: 'object',
      properties: {
        retry_after: { type: 'integer' },
        migrate_to_chat_id: { type: 'integer' },
      },
    },
  },
});

export const BOT_ID_PARAM: ParameterDoc = Object.freeze({
  type: 'string',
  pattern: '^[a-z0-9-]{1,64}$',
  description: 'A bot id of the config (`bots[].id`).',
});

export const JSON_OBJECT: JsonSchema = Object.freeze({
  type: 'object',
  additionalProperties: true,
});
