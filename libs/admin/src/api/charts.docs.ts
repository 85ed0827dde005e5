import { CHART_MINUTES, MINUTE_MS } from '@relaygram/observability';
import type { JsonSchema } from '@relaygram/openapi';

const TIME = { type: 'string', format: 'date-time' };
const NULLABLE_INT = { type: ['integer', 'null'] };
const CHART_COUNT = { type: 'integer', minimum: 0 };
const LATENCY_MS = {
  type: ['number', 'null'],
  description: "From acceptance to the 2xx, of the minute's deliveries; null without any",
};

/** MinuteCharts: the last hour of a bot or route, one bucket a minute. */
export const MINUTE_CHARTS: JsonSchema = {
  type: 'object',
  required: ['from', 'minute_ms', 'buckets'],
  properties: {
    bot: { type: 'string' },
    route: { type: 'string' },
    from: { ...TIME, description: 'Start of the first minute' },
    minute_ms: { const: MINUTE_MS },
    buckets: {
      type: 'array',
      minItems: CHART_MINUTES,
      maxItems: CHART_MINUTES,
      description: 'Oldest first; the last is the current minute, still counting',
      items: {
        type: 'object',
        required: ['at', 'accepted', 'delivered', 'failed', 'dead', 'queue', 'p50_ms', 'p99_ms'],
        properties: {
          at: { ...TIME, description: 'Start of the minute' },
          accepted: {
            ...CHART_COUNT,
            description:
              'A bot: updates taken (queued, or matching no route); a route: deliveries enqueued',
          },
          delivered: CHART_COUNT,
          failed: {
            ...CHART_COUNT,
            description: 'Attempts that did not deliver (retried or dead)',
          },
          dead: { ...CHART_COUNT, description: 'Deliveries that went to dead letters' },
          queue: { ...NULLABLE_INT, description: "Deliveries waiting at the minute's last sample" },
          p50_ms: LATENCY_MS,
          p99_ms: LATENCY_MS,
        },
      },
    },
  },
};
