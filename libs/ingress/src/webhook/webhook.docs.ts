import { BOT_ID_PARAM, ERROR_BODY, routeConfig, SECURITY, type RouteDoc } from '@relaygram/openapi';

const ACCEPTED = {
  type: 'object',
  required: ['status', 'deliveries'],
  properties: {
    status: { enum: ['queued', 'duplicate', 'ignored'] },
    deliveries: { type: 'integer', minimum: 0 },
  },
};

/** Telegram's Update: only update_id is checked, the rest is routed as it is. */
const UPDATE = {
  type: 'object',
  required: ['update_id'],
  properties: { update_id: { type: 'integer', minimum: 0 } },
  additionalProperties: true,
};

function webhookDoc(operationId: string, withBot: boolean): RouteDoc {
  const bot = withBot ? 'the bot' : 'the default bot';
  return {
    operationId,
    summary: `Receive an update of ${bot} from Telegram`,
    description:
      "Telegram's webhook call. The secret is checked before the body is read; the update " +
      'is deduplicated and queued for every matching route in one step, and no target is ' +
      'called here. Never 410 (Telegram would drop the webhook); 503 carries no Retry-After ' +
      "(Telegram's own backoff applies).",
    tags: ['webhooks'],
    security: [{ [SECURITY.telegramSecret]: [] }],
    ...(withBot ? { params: { botId: BOT_ID_PARAM } } : {}),
    body: { content: { 'application/json': UPDATE } },
    responses: {
      202: {
        description:
          'Queued for N routes, a duplicate of one seen within 24 h, or no route matched',
        schema: ACCEPTED,
      },
      400: { description: 'Not JSON, or update_id not a non-negative integer', schema: ERROR_BODY },
      401: { description: 'The secret header is missing or wrong', schema: ERROR_BODY },
      404: { description: 'No bot in webhook mode has this id', schema: ERROR_BODY },
      413: { description: 'The body exceeds 1 MiB', schema: ERROR_BODY },
      500: { description: 'Internal error', schema: ERROR_BODY },
      503: {
        description:
          'Redis failed: the update was not stored (or, with `redis.wait_replicas`, its replicas did not confirm it in time)',
        schema: ERROR_BODY,
      },
    },
  };
}

export const BOT_WEBHOOK_DOC = routeConfig(webhookDoc('receiveBotUpdate', true));
export const DEFAULT_BOT_WEBHOOK_DOC = routeConfig(webhookDoc('receiveDefaultBotUpdate', false));
