import { BOT_MODES, DEFAULT_PORTS } from '@relaygram/config';
import { routeConfig, type JsonSchema } from '@relaygram/openapi';
import { FAILING_AFTER_ATTEMPTS, FAILING_BODY_BYTES } from './failing-routes';

const PULL_ROUTE_VIEW: JsonSchema = {
  type: 'object',
  required: ['route', 'client', 'pending', 'last_polled_at', 'stale'],
  properties: {
    route: { type: 'string' },
    client: { type: 'string' },
    pending: { type: ['integer', 'null'] },
    last_polled_at: { type: ['string', 'null'], format: 'date-time' },
    stale: { type: 'boolean' },
  },
};

/** BotStatus: a bot as /healthz and the admin API show it. */
export const BOT_STATUS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'mode', 'polling', 'healthy', 'queue', 'dead'],
  properties: {
    id: { type: 'string' },
    mode: { enum: [...BOT_MODES] },
    polling: { type: 'boolean' },
    healthy: { type: 'boolean' },
    queue: { type: ['integer', 'null'], description: 'Deliveries waiting; null: Redis is away.' },
    dead: { type: ['integer', 'null'], description: 'Dead letters held; null: Redis is away.' },
    state: { type: 'string' },
    problem: { type: 'string' },
    webhook: {
      type: 'object',
      additionalProperties: true,
      description: "expected_url and Telegram's getWebhookInfo",
    },
    pull_routes: { type: 'array', items: PULL_ROUTE_VIEW },
  },
  // Features report more of a bot (a webhook bot's last error, a gateway's pacing).
  additionalProperties: true,
};

/** RouteFailing: why a route fails, or null while it does not. */
export const ROUTE_FAILING_SCHEMA: JsonSchema = {
  type: ['object', 'null'],
  description:
    `Set once ${FAILING_AFTER_ATTEMPTS} attempts in a row failed (on one dispatcher): the last ` +
    "answer's status, error and first bytes, and since when; a delivered attempt clears it",
  required: ['status', 'error', 'body', 'since', 'last_at', 'attempts'],
  properties: {
    status: { type: ['integer', 'null'], description: 'null: timeout or network error' },
    error: { type: 'string', description: '`HTTP 401`, `timeout`, `network error ECONNREFUSED`' },
    body: { type: 'string', maxLength: FAILING_BODY_BYTES },
    since: { type: 'string', format: 'date-time', description: 'The first failed attempt' },
    last_at: { type: 'string', format: 'date-time' },
    attempts: { type: 'integer', minimum: 1 },
  },
};

const ROUTE_HEALTH: JsonSchema = {
  type: 'object',
  required: ['name', 'failing'],
  properties: { name: { type: 'string' }, failing: ROUTE_FAILING_SCHEMA },
};

const HEALTHZ: JsonSchema = {
  type: 'object',
  required: ['status', 'service', 'polling', 'bots'],
  properties: {
    status: { enum: ['ok', 'degraded'] },
    service: { enum: Object.keys(DEFAULT_PORTS) },
    polling: { type: 'boolean' },
    bots: { type: 'array', items: BOT_STATUS_SCHEMA },
    routes: {
      type: 'array',
      items: ROUTE_HEALTH,
      description: 'Every push route; left out when Redis does not answer',
    },
    error: { type: 'string' },
    replicas: {
      type: 'object',
      description:
        'Ingress with `redis.wait_replicas`: whether Redis replicas confirm the updates this process accepts (while not, webhooks answer 503)',
      required: ['wait_replicas', 'confirming'],
      properties: {
        wait_replicas: { type: 'integer' },
        confirming: { type: 'boolean' },
        failing_since: { type: 'string', format: 'date-time' },
        problem: { type: 'string' },
      },
    },
  },
  // Features add fields of their own (the gateway's clients); they never replace these.
  additionalProperties: true,
};

const TERMINUS: JsonSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { enum: ['ok', 'error', 'shutting_down'] },
    info: { type: 'object', additionalProperties: true },
    error: { type: 'object', additionalProperties: true },
    details: { type: 'object', additionalProperties: true },
  },
};

const probe = (operationId: string, summary: string, down: string) =>
  routeConfig({
    operationId,
    summary,
    tags: ['health'],
    security: [],
    bothListeners: true,
    responses: {
      200: { description: 'Up', schema: TERMINUS },
      503: { description: down, schema: TERMINUS },
    },
  });

export const LIVE_DOC = probe(
  'getLiveness',
  'Liveness probe: the process runs and no feature knows of a fault only a restart mends',
  'Shutting down, or a fault only a restart mends: `error` names it',
);
export const READY_DOC = probe(
  'getReadiness',
  'Readiness probe: Redis answers, the config is loaded, every feature is ready',
  'Not ready: `error` names the checks that failed',
);

export const HEALTHZ_DOC = routeConfig({
  operationId: 'getHealthSummary',
  summary:
    "The operator's summary: every bot's mode, health, queue and dead letters; every route, failing or not",
  tags: ['health'],
  security: [],
  bothListeners: true,
  responses: {
    200: { description: 'ok, or degraded when a bot is unhealthy', schema: HEALTHZ },
    503: { description: 'Redis does not answer; what is known, with `error`', schema: HEALTHZ },
  },
});
