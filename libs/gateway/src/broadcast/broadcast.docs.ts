import {
  BROADCAST_CHUNK,
  BROADCAST_FAILURE_REASONS,
  BROADCAST_MAX_RECIPIENTS,
} from '@relaygram/contracts';
import {
  BOT_ID_PARAM,
  BROADCAST_FAILURE,
  BROADCAST_STATUS,
  BROADCAST_VIEW,
  ERROR_BODY,
  routeConfig,
  SECURITY,
  TELEGRAM_ERROR_BODY,
  type JsonSchema,
  type ParameterDoc,
  type ResponseDoc,
  type RouteDoc,
} from '@relaygram/openapi';
import type { BroadcastAction } from '@relaygram/queue';
import { IDEMPOTENCY_KEY, REPLAYED, RETRY_AFTER } from '../rest/rest-api.docs';

const COUNT: JsonSchema = { type: 'integer', minimum: 0 };
const MAX = BROADCAST_MAX_RECIPIENTS;

const CREATE_BODY: JsonSchema = {
  type: 'object',
  required: ['method', 'params', 'chat_ids'],
  additionalProperties: false,
  description: 'The fields may come in any order; `chat_ids` is read as it arrives',
  properties: {
    method: {
      type: 'string',
      pattern: '^[A-Za-z]+$',
      description:
        "A method that sends a message to a chat (sendMessage, copyMessage, forwardMessage, the other send* methods but sendChatAction), within the client's `methods`",
    },
    params: {
      type: 'object',
      additionalProperties: true,
      description:
        "The method's Bot API parameters, the same for every recipient, without `chat_id` (file_id or URL for media); at most 64 KiB of JSON",
    },
    chat_ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX,
      description: 'The recipients, sent to in this order',
      items: {
        oneOf: [
          { type: 'integer' },
          { type: 'string', pattern: '^(-?\\d{1,20}|@[A-Za-z0-9_]{1,64})$' },
        ],
      },
    },
  },
};

const STARTED: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'total'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: {
      ...BROADCAST_STATUS,
      description: '`running`; a repeated Idempotency-Key: its status now',
    },
    total: { ...COUNT, description: 'Recipients' },
  },
};

const LIST: JsonSchema = {
  type: 'object',
  required: ['offset', 'limit', 'items'],
  properties: { offset: COUNT, limit: COUNT, items: { type: 'array', items: BROADCAST_VIEW } },
};

const FAILURES: JsonSchema = {
  type: 'object',
  required: ['reason', 'total', 'offset', 'items'],
  properties: {
    reason: { type: 'string', enum: [...BROADCAST_FAILURE_REASONS] },
    total: { ...COUNT, description: 'Recipients that ended with this reason so far' },
    offset: COUNT,
    items: {
      type: 'array',
      description: 'In the order they ended',
      items: BROADCAST_FAILURE,
    },
  },
};

const ID_PARAM: ParameterDoc = {
  type: 'string',
  format: 'uuid',
  description: 'The id the broadcast was answered with',
};
const OFFSET: ParameterDoc = { type: 'integer', minimum: 0, default: 0 };

const UNAVAILABLE: ResponseDoc = {
  description: 'Redis does not answer; retry later',
  schema: ERROR_BODY,
  headers: { 'Retry-After': RETRY_AFTER },
};
const UNAUTHORIZED: ResponseDoc = {
  description: 'X-Service-Token is missing or matches no client',
  schema: ERROR_BODY,
};
const NOT_FOUND: ResponseDoc = {
  description:
    "Unknown bot, no default bot, or no broadcast of this client with this id (expired, never made, or another client's)",
  schema: ERROR_BODY,
};
const INTERNAL: ResponseDoc = { description: 'Internal error', schema: ERROR_BODY };

function doc(
  withBot: boolean,
  operationId: string,
  rest: Omit<RouteDoc, 'operationId' | 'tags' | 'security'>,
): RouteDoc {
  const route: RouteDoc = {
    tags: ['rest'],
    security: [{ [SECURITY.serviceToken]: [] }],
    operationId: withBot ? operationId : `${operationId}WithDefaultBot`,
    ...rest,
    summary: `${rest.summary}${withBot ? '' : ' with the default bot'}`,
  };
  const params = { ...(withBot ? { botId: BOT_ID_PARAM } : {}), ...rest.params };
  return Object.keys(params).length > 0 ? { ...route, params } : route;
}

function createDoc(withBot: boolean): RouteDoc {
  return doc(withBot, 'createBroadcast', {
    summary: 'Start a broadcast: one Bot API call to many chats',
    description:
      `Needs the client's \`broadcast: true\`. The body is streamed into Redis ${BROADCAST_CHUNK} recipients at a time (up to ${MAX}, 32 MiB), never held whole; any mistake in it (reported with its byte offset) discards what was stored. ` +
      "Answers 202 once every recipient is stored and the broadcast runs: dispatchers send it through the bot's pacing at `outbound.broadcast_share` of its rate. " +
      'With an Idempotency-Key, a repeat gets the broadcast the key made (the first body wins; the body is not compared), or 409 while that one is still being stored.',
    headers: { 'idempotency-key': IDEMPOTENCY_KEY },
    body: { content: { 'application/json': CREATE_BODY } },
    responses: {
      202: {
        description: 'Stored and running (or, for a repeated Idempotency-Key, what it made)',
        schema: STARTED,
        headers: {
          Location: {
            type: 'string',
            description: 'The broadcast: `/api/v1/<botId>/broadcasts/<id>`',
          },
          ...REPLAYED,
        },
      },
      400: {
        description:
          'The body is no broadcast (bad JSON, a field missing, unknown or invalid, a bad chat id, none or too many, `chat_id` in params, a method that sends nothing), or the Idempotency-Key is malformed',
        schema: ERROR_BODY,
      },
      401: UNAUTHORIZED,
      403: {
        description:
          'The client may not use this bot or method, may not broadcast (`broadcast: true`), or the method is reserved by the gateway: then Telegram-style',
        schema: { oneOf: [ERROR_BODY, TELEGRAM_ERROR_BODY] },
      },
      404: { description: 'Unknown bot, or no default bot is configured', schema: ERROR_BODY },
      409: {
        description:
          'The broadcast of this Idempotency-Key is still being stored (by another request), or another request with the key took it over while this body stalled',
        schema: ERROR_BODY,
        headers: { 'Retry-After': RETRY_AFTER },
      },
      413: { description: 'The body is larger than 32 MiB', schema: ERROR_BODY },
      415: { description: 'Not JSON', schema: ERROR_BODY },
      500: INTERNAL,
      503: UNAVAILABLE,
    },
  });
}

function listDoc(withBot: boolean): RouteDoc {
  return doc(withBot, 'listBroadcasts', {
    summary: "The client's broadcasts of the bot, newest first",
    description:
      "Started ones, kept 7 days after they end; from the bot's newest 10,000 broadcasts.",
    query: {
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      offset: OFFSET,
    },
    responses: {
      200: { description: 'A page', schema: LIST },
      400: { description: 'A bad limit or offset', schema: ERROR_BODY },
      401: UNAUTHORIZED,
      403: { description: 'The client may not use this bot', schema: ERROR_BODY },
      404: { description: 'Unknown bot, or no default bot is configured', schema: ERROR_BODY },
      500: INTERNAL,
      503: UNAVAILABLE,
    },
  });
}

function showDoc(withBot: boolean): RouteDoc {
  return doc(withBot, 'getBroadcast', {
    summary: "A broadcast's progress",
    description: 'Totals (sent, blocked, failed, pending), rate and an estimated finish.',
    params: { id: ID_PARAM },
    responses: {
      200: { description: 'The broadcast', schema: BROADCAST_VIEW },
      401: UNAUTHORIZED,
      403: { description: 'The client may not use this bot', schema: ERROR_BODY },
      404: NOT_FOUND,
      500: INTERNAL,
      503: UNAVAILABLE,
    },
  });
}

const CONTROL: Record<BroadcastAction, { summary: string; allowed: string }> = {
  pause: { summary: 'Pause a running broadcast', allowed: 'running' },
  resume: { summary: 'Resume a paused broadcast where it stopped', allowed: 'paused' },
  cancel: {
    summary: 'Cancel a broadcast: its pending recipients are never sent',
    allowed: 'running or paused',
  },
};

function controlDoc(action: BroadcastAction, withBot: boolean): RouteDoc {
  const { summary, allowed } = CONTROL[action];
  return doc(withBot, `${action}Broadcast`, {
    summary,
    description: `Needs the client's \`broadcast: true\`. Allowed when the broadcast is ${allowed}; answers it after.`,
    params: { id: ID_PARAM },
    responses: {
      200: { description: 'The broadcast with its new status', schema: BROADCAST_VIEW },
      401: UNAUTHORIZED,
      403: {
        description: 'The client may not use this bot, or may not broadcast',
        schema: ERROR_BODY,
      },
      404: NOT_FOUND,
      409: {
        description: `The broadcast is not ${allowed} (its status named)`,
        schema: ERROR_BODY,
      },
      500: INTERNAL,
      503: UNAVAILABLE,
    },
  });
}

function failuresDoc(withBot: boolean): RouteDoc {
  return doc(withBot, 'listBroadcastFailures', {
    summary: "Recipients a broadcast could not send to, with Telegram's answer",
    description:
      '`blocked`: Telegram answered 403 (blocked, kicked, deactivated); `failed`: any other refusal, or out of attempts.',
    params: { id: ID_PARAM },
    query: {
      reason: {
        type: 'string',
        enum: [...BROADCAST_FAILURE_REASONS],
        description: 'Required: which failures',
      },
      offset: OFFSET,
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    },
    responses: {
      200: { description: 'A page', schema: FAILURES },
      400: {
        description: 'reason missing or unknown, or a bad offset or limit',
        schema: ERROR_BODY,
      },
      401: UNAUTHORIZED,
      403: { description: 'The client may not use this bot', schema: ERROR_BODY },
      404: NOT_FOUND,
      500: INTERNAL,
      503: UNAVAILABLE,
    },
  });
}

export const broadcastCreateConfig = (withBot: boolean) => routeConfig(createDoc(withBot));
export const broadcastListConfig = (withBot: boolean) => routeConfig(listDoc(withBot));
export const broadcastShowConfig = (withBot: boolean) => routeConfig(showDoc(withBot));
export const broadcastFailuresConfig = (withBot: boolean) => routeConfig(failuresDoc(withBot));
export const broadcastControlConfig = (action: BroadcastAction, withBot: boolean) =>
  routeConfig(controlDoc(action, withBot));
