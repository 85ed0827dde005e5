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
import { dtoSchema } from './dto/dto-schema';
import type { RestOperation } from './rest-operations';
import { TELEGRAM_OK_BODY } from '../http/telegram-answer.docs';

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';

/** REST errors: `{"error"}`, with Telegram's details when Telegram said no. */
const REST_ERROR: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string' },
    error_code: { type: 'integer', description: "Telegram's error code (502 only)" },
    retry_after: { type: 'integer' },
    migrate_to_chat_id: { type: 'integer' },
  },
};

/** Telegram's Message, as far as Relaygram's callers rely on it; Telegram sends more. */
const MESSAGE: JsonSchema = {
  type: 'object',
  required: ['message_id', 'date', 'chat'],
  properties: {
    message_id: { type: 'integer' },
    date: { type: 'integer' },
    chat: {
      type: 'object',
      required: ['id', 'type'],
      properties: { id: { type: 'integer' }, type: { type: 'string' } },
      additionalProperties: true,
    },
    text: { type: 'string' },
  },
  additionalProperties: true,
};
const TRUE: JsonSchema = { const: true };

/** What Telegram answers each REST row's method with (its `result`). */
const RESULTS: Readonly<Record<string, JsonSchema>> = {
  sendMessage: MESSAGE,
  editMessageText: { oneOf: [MESSAGE, TRUE], description: 'true for an inline message' },
  editMessageReplyMarkup: { oneOf: [MESSAGE, TRUE], description: 'true for an inline message' },
  deleteMessage: TRUE,
  forwardMessage: MESSAGE,
  copyMessage: {
    type: 'object',
    required: ['message_id'],
    properties: { message_id: { type: 'integer' } },
    additionalProperties: true,
  },
  sendPhoto: MESSAGE,
  sendDocument: MESSAGE,
  answerCallbackQuery: TRUE,
  sendChatAction: TRUE,
};

export const RETRY_AFTER = { type: 'string', description: 'Seconds to wait' };

export const IDEMPOTENCY_KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Runs the call once per key (Stripe semantics): a repeat within 24 h gets the first ' +
    'answer again, with `Idempotent-Replayed: true`.',
};

export const REPLAYED = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'This is the stored answer of an earlier call with the same Idempotency-Key',
  },
};

/** An outbox send's 202: its id, queued. */
export const OUTBOX_QUEUED: JsonSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { const: 'queued' },
  },
};

const PREFER = {
  type: 'string',
  description:
    '`respond-async`: hand the call to the outbox instead of waiting for Telegram (its ' +
    'parameters need a `chat_id`; no uploads): answered 202 as `POST .../outbox`.',
};

/** A call handed to the outbox with `Prefer: respond-async`. */
const HANDED_OVER: ResponseDoc = {
  description: 'Prefer: respond-async: the call is queued in the outbox, durable in Redis',
  schema: OUTBOX_QUEUED,
  headers: {
    Location: { type: 'string', description: 'The send: `/api/v1/<botId>/outbox/<id>`' },
    'Preference-Applied': { type: 'string', enum: ['respond-async'] },
    ...REPLAYED,
  },
};

/** Every error a REST call can answer, by status; `reserved` adds the Telegram-style 403. */
function restErrors(raw: boolean): Record<string, ResponseDoc> {
  return {
    400: {
      description: 'A field is missing or invalid, or the Idempotency-Key is malformed',
      schema: ERROR_BODY,
    },
    401: { description: 'X-Service-Token is missing or matches no client', schema: ERROR_BODY },
    403: raw
      ? {
          description:
            'The client may not use this bot or method, or the method is reserved by the ' +
            'gateway (getUpdates, setWebhook, deleteWebhook, logOut, close): then ' +
            'Telegram-style',
          schema: { oneOf: [ERROR_BODY, TELEGRAM_ERROR_BODY] },
        }
      : { description: 'The client may not use this bot or method', schema: ERROR_BODY },
    404: { description: 'Unknown bot, or no default bot is configured', schema: ERROR_BODY },
    409: {
      description: 'A request with this Idempotency-Key is still running',
      schema: ERROR_BODY,
      headers: { 'Retry-After': RETRY_AFTER },
    },
    413: { description: 'The body is too large', schema: ERROR_BODY },
    415: { description: 'Neither JSON nor a form', schema: ERROR_BODY },
    422: { description: 'This Idempotency-Key was used with another request', schema: ERROR_BODY },
    500: { description: 'Internal error', schema: ERROR_BODY },
    502: {
      description:
        'Telegram answered an error (`ETELEGRAM: <code> <description>` with `error_code`, and ' +
        '`retry_after` or `migrate_to_chat_id` when given; a 429 past `max_wait` is answered ' +
        'without reaching Telegram), or Telegram is unreachable (`EFATAL: <reason>`)',
      schema: REST_ERROR,
      headers: { 'Retry-After': RETRY_AFTER },
    },
    503: {
      description: 'Idempotency-Key given and Redis does not answer',
      schema: ERROR_BODY,
      headers: { 'Retry-After': RETRY_AFTER },
    },
    504: { description: 'Telegram did not answer in time', schema: ERROR_BODY },
  };
}

/** A multipart upload: the text fields as in JSON (objects as JSON text), the file a part. */
function multipartSchema(json: JsonSchema, uploadField: string): JsonSchema {
  const properties = { ...(json.properties as Record<string, JsonSchema>) };
  properties[uploadField] = {
    description: 'The file itself, or a file_id or HTTP URL as text',
    oneOf: [{ type: 'string', contentMediaType: 'application/octet-stream' }, { type: 'string' }],
  };
  for (const [name, schema] of Object.entries(properties)) {
    if (schema.type === 'object') {
      properties[name] = { type: 'string', contentMediaType: 'application/json' };
    }
  }
  return { ...json, properties };
}

function operationDoc(op: RestOperation, withBot: boolean): RouteDoc {
  const json = dtoSchema(op.dto);
  const content: Record<string, JsonSchema> = { 'application/json': json, [FORM]: json };
  if (op.uploadField) content[MULTIPART] = multipartSchema(json, op.uploadField);
  return {
    ...common(withBot),
    operationId: operationId(op.method, withBot),
    summary: `${op.method}${withBot ? '' : ' with the default bot'}`,
    description:
      `Calls the Bot API method ${op.method}. In a form (or multipart) body, integers ` +
      'may be written as digits and objects as JSON text.',
    body: { content },
    responses: {
      200: {
        description: "Telegram's `result`, as it is",
        schema: RESULTS[op.method] ?? {},
        headers: REPLAYED,
      },
      202: HANDED_OVER,
      ...restErrors(false),
    },
  };
}

function rawDoc(withBot: boolean): RouteDoc {
  const params = {
    type: 'object',
    description: "The method's Bot API parameters",
    additionalProperties: true,
  };
  return {
    ...common(withBot),
    operationId: withBot ? 'callBotMethod' : 'callDefaultBotMethod',
    summary: `Any Bot API method${withBot ? '' : ' with the default bot'}`,
    description:
      'Calls the method named in the path with the parameters of the body (JSON, a form, ' +
      'or multipart with files). A `method` parameter may only repeat the one in the path.',
    params: {
      ...common(withBot).params,
      method: { type: 'string', pattern: '^[A-Za-z]+$', description: 'A Bot API method name' },
    },
    body: { content: { 'application/json': params, [FORM]: params, [MULTIPART]: params } },
    responses: {
      200: {
        description: "Telegram's answer",
        schema: TELEGRAM_OK_BODY,
        headers: REPLAYED,
      },
      202: HANDED_OVER,
      ...restErrors(true),
    },
  };
}

function common(withBot: boolean) {
  return {
    tags: ['rest'],
    security: [{ [SECURITY.serviceToken]: [] }],
    headers: { 'idempotency-key': IDEMPOTENCY_KEY, prefer: PREFER },
    ...(withBot ? { params: { botId: BOT_ID_PARAM } } : {}),
  };
}

function operationId(method: string, withBot: boolean): string {
  return withBot ? method : `${method}WithDefaultBot`;
}

/** The route config of one REST row, with and without the bot in the path. */
export function restOperationConfig(op: RestOperation, withBot: boolean) {
  return routeConfig(operationDoc(op, withBot));
}

export function rawMethodConfig(withBot: boolean) {
  return routeConfig(rawDoc(withBot));
}
