import {
  BOT_ID_PARAM,
  ERROR_BODY,
  routeConfig,
  SECURITY,
  TELEGRAM_ERROR_BODY,
  type JsonSchema,
  type ResponseDoc,
  type RouteDoc,
} from '@relaygram/openapi';
import { IDEMPOTENCY_KEY, OUTBOX_QUEUED, REPLAYED, RETRY_AFTER } from '../rest/rest-api.docs';

const CHAT_ID: JsonSchema = {
  oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^(-?\\d{1,20}|@[A-Za-z0-9_]{1,64})$' }],
};

const SEND_BODY: JsonSchema = {
  type: 'object',
  required: ['method', 'params'],
  additionalProperties: false,
  properties: {
    method: {
      type: 'string',
      pattern: '^[A-Za-z]+$',
      description: "A Bot API method (not a reserved one) within the client's `methods`",
    },
    params: {
      type: 'object',
      required: ['chat_id'],
      additionalProperties: true,
      description:
        "The method's Bot API parameters as JSON (file_id or URL for media, no uploads); " +
        '`chat_id` names the chat whose order the send keeps',
      properties: { chat_id: CHAT_ID },
    },
    callback: {
      type: 'boolean',
      description:
        "Not available yet: `true` is refused (the client's `callback_url` is not built)",
    },
  },
};

const ISO_TIME: JsonSchema = { type: 'string', format: 'date-time' };

const SEND_VIEW: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'method', 'chat_id', 'attempts', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'sent', 'failed'] },
    method: { type: 'string' },
    chat_id: { oneOf: [{ type: 'integer' }, { type: 'string' }] },
    attempts: { type: 'integer', minimum: 0 },
    created_at: ISO_TIME,
    updated_at: ISO_TIME,
    result: { description: "Telegram's `result` (sent)" },
    error: {
      type: 'object',
      required: ['description'],
      description: "Telegram's error, or why the send was never made (failed)",
      properties: { error_code: { type: 'integer' }, description: { type: 'string' } },
    },
    last_error: { type: 'string', description: 'Why the last attempt did not go through (queued)' },
    next_attempt_at: { ...ISO_TIME, description: 'When the next attempt is due (queued)' },
    migrated_to_chat_id: {
      oneOf: [{ type: 'integer' }, { type: 'string' }],
      description: 'The group became a supergroup: the send went to this chat',
    },
  },
};

const OUTBOX_ID_PARAM = {
  type: 'string',
  format: 'uuid',
  description: 'The id the outbox answered the send with',
};

const UNAVAILABLE: ResponseDoc = {
  description: 'Redis does not answer; retry later',
  schema: ERROR_BODY,
  headers: { 'Retry-After': RETRY_AFTER },
};

function sendDoc(withBot: boolean): RouteDoc {
  return {
    tags: ['rest'],
    security: [{ [SECURITY.serviceToken]: [] }],
    operationId: withBot ? 'sendThroughOutbox' : 'sendThroughOutboxWithDefaultBot',
    summary: `Hand a Bot API call to the outbox${withBot ? '' : ' with the default bot'}`,
    description:
      'Answers 202 once the send is durable in Redis. The dispatcher sends it in order per ' +
      "chat through the bot's pacing, retrying 429, 5xx and network errors; a 4xx ends it " +
      'as failed. Read its status at the `Location` answered.',
    headers: { 'idempotency-key': IDEMPOTENCY_KEY },
    ...(withBot ? { params: { botId: BOT_ID_PARAM } } : {}),
    body: { content: { 'application/json': SEND_BODY } },
    responses: {
      202: {
        description: 'Queued: durable, to be sent by the dispatcher',
        schema: OUTBOX_QUEUED,
        headers: {
          Location: { type: 'string', description: 'The send: `/api/v1/<botId>/outbox/<id>`' },
          ...REPLAYED,
        },
      },
      400: {
        description:
          'The body is not an outbox send (a field missing, invalid or unknown, `callback: ' +
          'true`), or the Idempotency-Key is malformed',
        schema: ERROR_BODY,
      },
      401: { description: 'X-Service-Token is missing or matches no client', schema: ERROR_BODY },
      403: {
        description:
          'The client may not use this bot or method, or the method is reserved by the ' +
          'gateway: then Telegram-style',
        schema: { oneOf: [ERROR_BODY, TELEGRAM_ERROR_BODY] },
      },
      404: { description: 'Unknown bot, or no default bot is configured', schema: ERROR_BODY },
      409: {
        description: 'A request with this Idempotency-Key is still running',
        schema: ERROR_BODY,
        headers: { 'Retry-After': RETRY_AFTER },
      },
      413: { description: 'The body is too large', schema: ERROR_BODY },
      415: { description: 'Not JSON', schema: ERROR_BODY },
      422: {
        description: 'This Idempotency-Key was used with another request',
        schema: ERROR_BODY,
      },
      500: { description: 'Internal error', schema: ERROR_BODY },
      503: UNAVAILABLE,
    },
  };
}

function readDoc(withBot: boolean): RouteDoc {
  return {
    tags: ['rest'],
    security: [{ [SECURITY.serviceToken]: [] }],
    operationId: withBot ? 'getOutboxSend' : 'getOutboxSendWithDefaultBot',
    summary: `An outbox send's status${withBot ? '' : ' with the default bot'}`,
    description:
      "Its status (`queued`, `sent` with Telegram's `result`, `failed` with the error), " +
      'attempts and times, kept 7 days after its last change.',
    params: {
      ...(withBot ? { botId: BOT_ID_PARAM } : {}),
      id: OUTBOX_ID_PARAM,
    },
    responses: {
      200: { description: 'The send', schema: SEND_VIEW },
      401: { description: 'X-Service-Token is missing or matches no client', schema: ERROR_BODY },
      403: { description: 'The client may not use this bot', schema: ERROR_BODY },
      404: {
        description:
          'Unknown bot, no default bot, or no send of this client with this id (expired, ' +
          "never made, or another client's)",
        schema: ERROR_BODY,
      },
      500: { description: 'Internal error', schema: ERROR_BODY },
      503: UNAVAILABLE,
    },
  };
}

export function outboxSendConfig(withBot: boolean) {
  return routeConfig(sendDoc(withBot));
}

export function outboxReadConfig(withBot: boolean) {
  return routeConfig(readDoc(withBot));
}
