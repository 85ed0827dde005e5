import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric Relaygram exports, in one registry per process. Labels are config names
 * (bot ids, route names), Bot API method names and status codes: never tokens, never
 * raw paths.
 */
export class RelaygramMetrics {
  readonly registry = new Registry();

  readonly updatesReceived = new Counter({
    name: 'relaygram_updates_received_total',
    help: 'Updates received from Telegram, by bot, source (webhook|polling) and outcome (queued|duplicate|ignored|rejected)',
    labelNames: ['bot', 'source', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly deliveries = new Counter({
    name: 'relaygram_deliveries_total',
    help: 'Delivery attempts by route and outcome (delivered|retry|dead)',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly deadLettered = new Counter({
    name: 'relaygram_dead_lettered_total',
    help: 'Deliveries that went to dead letters, by route and reason',
    labelNames: ['route', 'reason'] as const,
    registers: [this.registry],
  });

  readonly deliveryLatency = new Histogram({
    name: 'relaygram_delivery_latency_seconds',
    help: 'Time from receipt of the update to the 2xx answer of the target, by route',
    labelNames: ['route'] as const,
    buckets: [
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600,
    ],
    registers: [this.registry],
  });

  readonly deliveryAttempts = new Histogram({
    name: 'relaygram_delivery_attempts',
    help: 'Attempts a delivery took until it was delivered or went dead, by route',
    labelNames: ['route'] as const,
    buckets: [1, 2, 3, 5, 8, 13, 21, 50, 100],
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'relaygram_queue_depth',
    help: 'Deliveries waiting in the lanes of a route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly lanes = new Gauge({
    name: 'relaygram_lanes',
    help: 'Non-empty lanes of a route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly deadLetters = new Gauge({
    name: 'relaygram_dead_letters',
    help: 'Dead letters held for a route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly telegramCalls = new Counter({
    name: 'relaygram_telegram_api_calls_total',
    help: 'Bot API calls by bot, method and result code (200, Telegram error_code, 0 network error, -1 timeout)',
    labelNames: ['bot', 'method', 'code'] as const,
    registers: [this.registry],
  });

  readonly telegramErrors = new Counter({
    name: 'relaygram_telegram_api_errors_total',
    help: 'Failed Bot API calls by bot, method and code',
    labelNames: ['bot', 'method', 'code'] as const,
    registers: [this.registry],
  });

  readonly webhookReplies = new Counter({
    name: 'relaygram_webhook_reply_calls_total',
    help: "Bot API calls made from targets' webhook replies, by route and outcome (ok|error|refused)",
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly pollerState = new Gauge({
    name: 'relaygram_poller_state',
    help: "1 for the current state of each bot's poller (polling|standby|backoff|conflict|unauthorized|stopped), else 0",
    labelNames: ['bot', 'state'] as const,
    registers: [this.registry],
  });

  readonly botHealthy = new Gauge({
    name: 'relaygram_bot_healthy',
    help: '1 when the bot is healthy (poller or webhook working), else 0',
    labelNames: ['bot'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean; service?: string } = {}) {
    if (options.service) this.registry.setDefaultLabels({ service: options.service });
    if (options.defaultMetrics !== false)
      collectDefaultMetrics({ register: this.registry, prefix: 'relaygram_' });
  }
}
