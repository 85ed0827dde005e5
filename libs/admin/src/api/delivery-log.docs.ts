import { ATTEMPT_STATUS_FILTERS, DELIVERY_STATES, LOGGED_OUTCOMES } from '@relaygram/contracts';
import { BOT_ID_PARAM, type JsonSchema } from '@relaygram/openapi';
import { ATTEMPT_PAGE_DEFAULT, ATTEMPT_PAGE_MAX } from '@relaygram/queue';
import { ADMIN_ERROR, adminDoc } from './admin-api.docs';
import { NAME } from './admin-names.docs';

const TIME = { type: 'string', format: 'date-time' };
const NULLABLE_TIME = { type: ['string', 'null'], format: 'date-time' };
const TIME_FILTER = {
  type: 'string',
  description: 'An ISO 8601 time or milliseconds since the epoch',
};

/** AttemptView: one logged attempt. */
const ATTEMPT: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'at',
    'delivery_id',
    'update_id',
    'bot',
    'route',
    'attempt',
    'outcome',
    'status',
    'error',
    'duration_ms',
    'body',
    'next_attempt_at',
  ],
  properties: {
    id: { type: 'string', description: 'The log entry id; a cursor' },
    at: { ...TIME, description: 'When the attempt ended' },
    delivery_id: { type: 'string' },
    update_id: { type: 'integer', minimum: 0 },
    bot: { type: 'string' },
    route: { type: 'string' },
    attempt: { type: 'integer', minimum: 0, description: '1 for the first attempt' },
    outcome: { enum: [...LOGGED_OUTCOMES] },
    status: { type: ['integer', 'null'], description: "The target's HTTP status; null without" },
    error: {
      type: ['string', 'null'],
      description: 'Without an answer: timeout, a network error code, or expired (max_age)',
    },
    duration_ms: { type: 'integer', minimum: 0 },
    body: { type: 'string', description: "The answer's first 512 bytes, as UTF-8 text" },
    next_attempt_at: { ...NULLABLE_TIME, description: 'A retry: when the next attempt is due' },
  },
};

const UPDATE_TRACE: JsonSchema = {
  type: 'object',
  required: ['bot', 'update_id', 'status', 'received_at', 'duplicates_at', 'deliveries'],
  properties: {
    bot: { type: 'string' },
    update_id: { type: 'integer', minimum: 0 },
    status: {
      enum: ['queued', 'ignored', 'duplicate'],
      description:
        'How ingress met it first: queued for its routes, ignored (no route matched), or duplicate (its first arrival has left the log)',
    },
    received_at: TIME,
    duplicates_at: {
      type: 'array',
      items: TIME,
      description: 'When it came again and was dropped as a duplicate',
    },
    deliveries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['route', 'delivery_id', 'state', 'next_attempt_at', 'attempts'],
        properties: {
          route: { type: 'string' },
          delivery_id: { type: 'string' },
          state: { enum: [...DELIVERY_STATES] },
          next_attempt_at: NULLABLE_TIME,
          attempts: { type: 'array', items: ATTEMPT, description: 'Oldest first' },
        },
      },
    },
  },
};

export const DELIVERY_LOG_DOCS = {
  updateTrace: adminDoc({
    operationId: 'traceUpdate',
    summary: "An update's fan-out, each delivery's state and every attempt with its answer",
    description:
      'From the delivery log, which keeps delivery_log.max_age (24h by default) and at most delivery_log.updates_per_bot updates per bot and attempts_per_route attempts per route.',
    params: {
      bot: BOT_ID_PARAM,
      updateId: { type: 'string', pattern: '^[0-9]+$', description: 'The update_id' },
    },
    responses: {
      200: { description: 'The update as the log has it', schema: UPDATE_TRACE },
      400: { description: 'An update id that is not a non-negative integer', schema: ADMIN_ERROR },
    },
  }),
  routeAttempts: adminDoc({
    operationId: 'listRouteAttempts',
    summary: "A route's delivery attempts, newest first, one page",
    params: { route: NAME },
    query: {
      status: {
        enum: [...ATTEMPT_STATUS_FILTERS],
        description: 'A status class; error: no answer; failed: all but 2xx',
      },
      since: { ...TIME_FILTER, description: `${TIME_FILTER.description}: attempts at or after` },
      until: { ...TIME_FILTER, description: `${TIME_FILTER.description}: attempts before` },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: ATTEMPT_PAGE_MAX,
        default: ATTEMPT_PAGE_DEFAULT,
      },
      cursor: { type: 'string', description: 'next_cursor of the page before' },
    },
    responses: {
      200: {
        description: 'A page',
        schema: {
          type: 'object',
          required: ['route', 'items', 'next_cursor'],
          properties: {
            route: { type: 'string' },
            items: { type: 'array', items: ATTEMPT },
            next_cursor: { type: ['string', 'null'] },
          },
        },
      },
      400: {
        description: 'A bad filter, limit or cursor (`parameter` names it)',
        schema: ADMIN_ERROR,
      },
    },
  }),
};
