import {
  BOT_ID_PARAM,
  ERROR_BODY,
  routeConfig,
  SECURITY,
  type JsonSchema,
  type ParameterDoc,
  type ResponseDoc,
  type RouteDoc,
} from '@relaygram/openapi';
import { BOT_STATUS_SCHEMA, ROUTE_FAILING_SCHEMA } from '@relaygram/observability';
import { BOT_MODES, DELIVERY_FORMATS, ORDERINGS } from '@relaygram/config';
import { DEAD_REASONS } from '@relaygram/contracts';
import { DEAD_ROUTE, NAME } from './admin-names.docs';
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from './admin-params';
import { MINUTE_CHARTS } from './charts.docs';

const NULLABLE_INT = { type: ['integer', 'null'] };
const NULLABLE_STRING = { type: ['string', 'null'] };
const TIME = { type: 'string', format: 'date-time' };
const REASON = { enum: [...DEAD_REASONS] };

/** `{"error"}`, with `parameter` naming the bad one on a 400. */
export const ADMIN_ERROR: JsonSchema = {
  ...ERROR_BODY,
  properties: { error: { type: 'string' }, parameter: { type: 'string' } },
};

const TELEGRAM_FAILURE: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string' },
    error_code: { type: 'integer' },
    retry_after: { type: 'integer' },
  },
};

const PAUSE = {
  type: 'object',
  required: ['until', 'retry_after'],
  properties: { until: TIME, retry_after: { type: 'integer' } },
};

const BOT_VIEW: JsonSchema = {
  ...BOT_STATUS_SCHEMA,
  required: [
    ...(BOT_STATUS_SCHEMA.required as string[]),
    'username',
    'default',
    'allowed_updates',
    'outbound',
  ],
  properties: {
    ...(BOT_STATUS_SCHEMA.properties as Record<string, JsonSchema>),
    username: NULLABLE_STRING,
    default: { type: 'boolean' },
    allowed_updates: { type: 'array', items: { type: 'string' } },
    poller: {
      type: ['object', 'null'],
      description: 'Polling bots: the poller lease and the next offset; null when Redis is away',
      required: ['leased', 'lease_ttl_ms', 'offset'],
      properties: { leased: { type: 'boolean' }, lease_ttl_ms: NULLABLE_INT, offset: NULLABLE_INT },
    },
    outbound: {
      type: 'object',
      required: ['pacing', 'pause', 'paused_chats', 'paused_chats_total'],
      properties: {
        pacing: { enum: ['shared', 'degraded', 'off'] },
        per_second: { type: 'number' },
        per_chat_per_second: { type: 'number' },
        chat_burst: { type: 'number' },
        per_group_per_minute: { type: 'number' },
        max_wait_ms: { type: 'number' },
        broadcast_share: { type: 'number' },
        pause: { oneOf: [PAUSE, { type: 'null' }] },
        paused_chats: {
          type: 'array',
          items: {
            ...PAUSE,
            required: ['chat', 'until', 'retry_after'],
            properties: { ...PAUSE.properties, chat: {} },
          },
        },
        paused_chats_total: { type: 'integer' },
      },
    },
  },
};

const WEBHOOK_VIEW: JsonSchema = {
  type: 'object',
  required: ['bot', 'mode', 'webhook'],
  properties: {
    bot: { type: 'string' },
    mode: { enum: [...BOT_MODES] },
    webhook: {
      type: 'object',
      additionalProperties: true,
      description: "Telegram's getWebhookInfo (the URL without query)",
    },
    expected_url: { type: 'string' },
    problem: { type: 'string' },
    status: { const: 'set' },
  },
};

const ROUTE_VIEW: JsonSchema = {
  type: 'object',
  required: ['name', 'bots', 'queue', 'lanes', 'delivered', 'dead', 'dead_total'],
  properties: {
    name: { type: 'string' },
    bots: { type: 'array', items: { type: 'string' } },
    target: { type: ['string', 'null'], description: 'Without query or user info' },
    format: { enum: [...DELIVERY_FORMATS] },
    ordering: { enum: [...ORDERINGS] },
    concurrency: { type: 'integer' },
    queue: { type: 'integer' },
    lanes: { type: 'integer' },
    delivered: { type: 'integer' },
    dead: { type: 'integer' },
    dead_total: { type: 'integer' },
    last_status: NULLABLE_INT,
    last_error: NULLABLE_STRING,
    last_error_at: { type: ['string', 'null'], format: 'date-time' },
    failing: ROUTE_FAILING_SCHEMA,
  },
};

const DEAD_LETTER: JsonSchema = {
  type: 'object',
  required: [
    'delivery_id',
    'route',
    'bot',
    'update_id',
    'reason',
    'attempts',
    'accepted_at',
    'dead_at',
    'update',
  ],
  properties: {
    delivery_id: { type: 'string' },
    route: { type: 'string' },
    bot: { type: 'string' },
    update_id: { type: 'integer' },
    update_type: NULLABLE_STRING,
    reason: REASON,
    attempts: { type: 'integer' },
    last_status: NULLABLE_INT,
    last_error: NULLABLE_STRING,
    last_body: { ...NULLABLE_STRING, description: 'Up to 1 KiB of the last answer' },
    accepted_at: TIME,
    dead_at: TIME,
    update: { description: 'The update as received' },
  },
};

const DELIVERY_ID: ParameterDoc = { type: 'string', description: 'A delivery id' };

const unauthorized: ResponseDoc = {
  description: 'Authorization is not `Bearer $ADMIN_TOKEN`',
  schema: ERROR_BODY,
  headers: { 'WWW-Authenticate': { type: 'string' } },
};

export function adminDoc(
  doc: Omit<RouteDoc, 'tags' | 'security' | 'responses'> & {
    responses: Record<string, ResponseDoc>;
  },
): ReturnType<typeof routeConfig> {
  return routeConfig({
    ...doc,
    tags: ['admin'],
    security: [{ [SECURITY.adminToken]: [] }],
    responses: {
      ...doc.responses,
      401: unauthorized,
      404: {
        description: 'Not found; everything under /admin answers 404 when ADMIN_TOKEN is not set',
        schema: ERROR_BODY,
      },
      500: { description: 'Internal error', schema: ERROR_BODY },
      503: { description: 'Redis does not answer', schema: ERROR_BODY },
    },
  });
}

const telegramErrors: Record<string, ResponseDoc> = {
  502: { description: 'Telegram answered an error, or is unreachable', schema: TELEGRAM_FAILURE },
  504: { description: 'Telegram did not answer in time', schema: ERROR_BODY },
};

export const ADMIN_DOCS = {
  overview: adminDoc({
    operationId: 'getAdminOverview',
    summary: 'The service, bot ids, route names and dead-letter reasons',
    responses: {
      200: {
        description: 'Overview',
        schema: {
          type: 'object',
          required: ['service', 'bots', 'routes', 'dead_reasons'],
          properties: {
            service: { type: 'string' },
            bots: { type: 'array', items: { type: 'string' } },
            routes: { type: 'array', items: { type: 'string' } },
            dead_reasons: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  }),
  unknown: routeConfig({ catchAll: 'unknown admin API paths answer 404 after the token check' }),
  bots: adminDoc({
    operationId: 'listBots',
    summary: 'Every bot: health as in /healthz, config, poller, outbound budgets and pauses',
    responses: {
      200: {
        description: 'The bots',
        schema: {
          type: 'object',
          required: ['bots'],
          properties: { bots: { type: 'array', items: BOT_VIEW } },
        },
      },
    },
  }),
  bot: adminDoc({
    operationId: 'getBot',
    summary: 'One bot',
    params: { bot: BOT_ID_PARAM },
    responses: { 200: { description: 'The bot', schema: BOT_VIEW } },
  }),
  webhookInfo: adminDoc({
    operationId: 'getBotWebhook',
    summary: "Telegram's getWebhookInfo now, the expected URL and what is wrong",
    params: { bot: BOT_ID_PARAM },
    responses: { 200: { description: 'The webhook', schema: WEBHOOK_VIEW }, ...telegramErrors },
  }),
  setWebhook: adminDoc({
    operationId: 'setBotWebhook',
    summary: 'setWebhook with the configured URL, secret, allowed_updates and max_connections',
    description: 'Never drops pending updates. Answers the webhook info after.',
    params: { bot: BOT_ID_PARAM },
    responses: {
      200: { description: 'Set', schema: WEBHOOK_VIEW },
      400: { description: 'The bot is in polling mode', schema: ADMIN_ERROR },
      ...telegramErrors,
    },
  }),
  routes: adminDoc({
    operationId: 'listRoutes',
    summary: 'Every route with its queue, lanes, deliveries, dead letters and last error',
    responses: {
      200: {
        description: 'The routes',
        schema: {
          type: 'object',
          required: ['routes'],
          properties: { routes: { type: 'array', items: ROUTE_VIEW } },
        },
      },
    },
  }),
  route: adminDoc({
    operationId: 'getRoute',
    summary: 'One route',
    params: { route: NAME },
    responses: { 200: { description: 'The route', schema: ROUTE_VIEW } },
  }),
  botCharts: adminDoc({
    operationId: 'getBotCharts',
    summary:
      "The bot's last hour, a bucket a minute: accepted, delivered, failed, dead, queue, latency",
    description:
      'Counted by every process in memory and added to Redis every few seconds; the current minute is still counting. For longer history use /metrics.',
    params: { bot: BOT_ID_PARAM },
    responses: { 200: { description: 'The minute buckets', schema: MINUTE_CHARTS } },
  }),
  routeCharts: adminDoc({
    operationId: 'getRouteCharts',
    summary:
      "The route's last hour, a bucket a minute: accepted, delivered, failed, dead, queue, latency",
    description:
      'Counted by every process in memory and added to Redis every few seconds; the current minute is still counting. For longer history use /metrics.',
    params: { route: NAME },
    responses: { 200: { description: 'The minute buckets', schema: MINUTE_CHARTS } },
  }),
  deadLetters: adminDoc({
    operationId: 'listDeadLetters',
    summary: 'Dead letters, newest first, one page',
    query: {
      route: DEAD_ROUTE,
      bot: NAME,
      reason: REASON,
      limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
      cursor: { type: 'string', description: 'next_cursor of the page before' },
    },
    responses: {
      200: {
        description: 'A page',
        schema: {
          type: 'object',
          required: ['items', 'next_cursor'],
          properties: {
            items: { type: 'array', items: DEAD_LETTER },
            next_cursor: NULLABLE_STRING,
          },
        },
      },
      400: {
        description: 'A bad filter, limit or cursor (`parameter` names it)',
        schema: ADMIN_ERROR,
      },
    },
  }),
  deadLetter: adminDoc({
    operationId: 'getDeadLetter',
    summary: 'One dead letter with its update',
    params: { id: DELIVERY_ID },
    responses: { 200: { description: 'The dead letter', schema: DEAD_LETTER } },
  }),
  replayOne: adminDoc({
    operationId: 'replayDeadLetter',
    summary: "Re-send one dead letter to the tail of its lane, with the route's current config",
    params: { id: DELIVERY_ID },
    responses: {
      200: {
        description: 'Queued',
        schema: {
          type: 'object',
          required: ['status', 'delivery_id'],
          properties: { status: { const: 'queued' }, delivery_id: { type: 'string' } },
        },
      },
      409: { description: 'Its route is gone', schema: ERROR_BODY },
    },
  }),
  replayMatching: adminDoc({
    operationId: 'replayDeadLetters',
    summary: 'Re-send every dead letter of a route or bot (optionally of one reason), oldest first',
    query: { route: DEAD_ROUTE, bot: NAME, reason: REASON },
    body: {
      content: {
        'application/json': {
          type: 'object',
          properties: { route: DEAD_ROUTE, bot: NAME, reason: REASON },
          description: 'route or bot required (or given in the query)',
        },
      },
    },
    responses: {
      200: {
        description: 'Done: how many were queued and failed, the first failures',
        schema: {
          type: 'object',
          required: ['status', 'filter', 'queued', 'failed', 'failures'],
          properties: {
            status: { const: 'done' },
            filter: { type: 'object', additionalProperties: { type: 'string' } },
            queued: { type: 'integer' },
            failed: { type: 'integer' },
            failures: {
              type: 'array',
              maxItems: 20,
              items: {
                type: 'object',
                required: ['delivery_id', 'error'],
                properties: { delivery_id: { type: 'string' }, error: { type: 'string' } },
              },
            },
          },
        },
      },
      400: { description: 'Neither route nor bot, or a bad value', schema: ADMIN_ERROR },
    },
  }),
  remove: adminDoc({
    operationId: 'deleteDeadLetter',
    summary: 'Delete one dead letter',
    params: { id: DELIVERY_ID },
    responses: {
      200: {
        description: 'Deleted',
        schema: {
          type: 'object',
          required: ['status', 'delivery_id'],
          properties: { status: { const: 'deleted' }, delivery_id: { type: 'string' } },
        },
      },
    },
  }),
};
