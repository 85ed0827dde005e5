import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LATENCY_BOUNDS_S } from '../charts/minute-buckets';
import type { TelegramCallEvent } from '@relaygram/telegram';
import { withTimeout } from '../timeout';

interface PendingCalls {
  readonly labels: { bot: string; method: string; code: string };
  calls: number;
  errors: number;
}

/** Fills gauges from their source (Redis...) right before a scrape reads them. */
export type ScrapeHook = () => Promise<void> | void;

/** A scrape waits at most this long for the scrape hooks; the gauges then keep their last values. */
export const SCRAPE_REFRESH_TIMEOUT_MS = 2000;

/** Bot API method labels kept per process; later new names are counted as `other`. */
const MAX_METHOD_LABELS = 200;
const NOT_FOUND = 404;

/**
 * Every metric Relaygram exports, in one registry per process. Labels are config names
 * (bot ids, route names), Bot API method names and status codes: never tokens, never
 * raw paths.
 */
export class RelaygramMetrics {
  readonly registry = new Registry();
  private readonly scrapeHooks = new Map<object, ScrapeHook>();
  private refreshing: Promise<void> | undefined;
  private readonly telegramMethods = new Set<string>();
  // Every gauge refreshed at scrape time shares this callback; prom-client calls them
  // concurrently, and they all wait for the one refresh.
  private readonly collect = (): Promise<void> => this.refresh();

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
    buckets: [...LATENCY_BOUNDS_S],
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
    collect: this.collect,
  });

  readonly lanes = new Gauge({
    name: 'relaygram_lanes',
    help: 'Non-empty lanes of a route',
    labelNames: ['route'] as const,
    registers: [this.registry],
    collect: this.collect,
  });

  readonly deadLetters = new Gauge({
    name: 'relaygram_dead_letters',
    help: 'Dead letters held for a route',
    labelNames: ['route'] as const,
    registers: [this.registry],
    collect: this.collect,
  });

  /**
   * The Bot API calls counted since the counters below were last read, by label set:
   * a call adds one here, and the counters take the sums when read (a scrape), so no
   * label object is built, validated and hashed per call.
   */
  private readonly pendingCalls = new Map<string, PendingCalls>();
  private readonly flushCalls = (): void => this.flushTelegramCalls();

  readonly telegramCalls = new Counter({
    name: 'relaygram_telegram_api_calls_total',
    help: 'Bot API calls by bot, method and result code (200, Telegram error_code, 0 network error, -1 timeout)',
    labelNames: ['bot', 'method', 'code'] as const,
    registers: [this.registry],
    collect: this.flushCalls,
  });

  readonly telegramErrors = new Counter({
    name: 'relaygram_telegram_api_errors_total',
    help: 'Failed Bot API calls by bot, method and code',
    labelNames: ['bot', 'method', 'code'] as const,
    registers: [this.registry],
    collect: this.flushCalls,
  });

  readonly webhookReplies = new Counter({
    name: 'relaygram_webhook_reply_calls_total',
    help: "Bot API calls made from targets' webhook replies, by route and outcome (ok|error|refused)",
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly outboundWait = new Histogram({
    name: 'relaygram_outbound_wait_seconds',
    help: 'Time a paced Bot API call waited for its slot, by bot and the budget it waited for (bot|chat|group|pause, none when it went at once)',
    labelNames: ['bot', 'budget'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly outboundPaced = new Counter({
    name: 'relaygram_outbound_paced_total',
    help: 'Paced Bot API calls answered 429 without calling Telegram (no slot within max_wait), by bot and the budget that refused them',
    labelNames: ['bot', 'budget'] as const,
    registers: [this.registry],
  });

  readonly telegram429 = new Counter({
    name: 'relaygram_telegram_429_total',
    help: 'Telegram 429 answers to paced calls, by bot and the pause they set (chat|bot)',
    labelNames: ['bot', 'scope'] as const,
    registers: [this.registry],
  });

  readonly outboundPauses = new Gauge({
    name: 'relaygram_outbound_pauses',
    help: 'Pauses set by Telegram 429s still in force, by bot and scope (chat|bot)',
    labelNames: ['bot', 'scope'] as const,
    registers: [this.registry],
    collect: this.collect,
  });

  readonly outboundPacingDegraded = new Gauge({
    name: 'relaygram_outbound_pacing_degraded',
    help: '1 while this process paces alone because Redis does not answer, else 0',
    registers: [this.registry],
    collect: this.collect,
  });

  readonly stalledWorkers = new Gauge({
    name: 'relaygram_dispatcher_stalled_workers',
    help: "1 while this dispatcher's worker of the queue (delivery.<route>, maintenance) takes no job although one waits and it has a free slot",
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  readonly pullServed = new Counter({
    name: 'relaygram_pull_served_total',
    help: 'Updates handed to pull route clients by getUpdates (again until confirmed), by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly pullConfirmed = new Counter({
    name: 'relaygram_pull_confirmed_total',
    help: 'Updates of pull routes confirmed by their client (getUpdates offset), by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly pullConflicts = new Counter({
    name: 'relaygram_pull_conflicts_total',
    help: 'getUpdates calls of pull routes ended with 409 by a newer call of the same client and bot, by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly pullPending = new Gauge({
    name: 'relaygram_pull_pending',
    help: 'Updates of a pull route waiting for its client to take and confirm them',
    labelNames: ['route'] as const,
    registers: [this.registry],
    collect: this.collect,
  });

  readonly pullStale = new Gauge({
    name: 'relaygram_pull_stale',
    help: '1 when updates of a pull route wait and its client has not polled for 5 minutes, else 0',
    labelNames: ['route'] as const,
    registers: [this.registry],
    collect: this.collect,
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
    collect: this.collect,
  });

  readonly broadcastSends = new Counter({
    name: 'relaygram_broadcast_sends_total',
    help: 'Sends of broadcasts to one recipient, by bot and outcome (sent|blocked|failed|retry)',
    labelNames: ['bot', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly broadcastPending = new Gauge({
    name: 'relaygram_broadcast_pending',
    help: "Recipients of a bot's running broadcasts not sent, blocked or failed yet (shared by all replicas: max, not sum)",
    labelNames: ['bot'] as const,
    registers: [this.registry],
    collect: this.collect,
  });

  readonly scrapeRefreshFailures = new Counter({
    name: 'relaygram_metrics_refresh_failures_total',
    help: 'Scrapes whose refresh of the queue and bot gauges from Redis failed or timed out (the gauges then show their previous values)',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean; service?: string } = {}) {
    if (options.service) this.registry.setDefaultLabels({ service: options.service });
    if (options.defaultMetrics !== false)
      collectDefaultMetrics({ register: this.registry, prefix: 'relaygram_' });
  }

  /** Registers a hook run before every scrape; `owner` removes it again. */
  addScrapeHook(owner: object, hook: ScrapeHook): void {
    this.scrapeHooks.set(owner, hook);
  }

  removeScrapeHook(owner: object): void {
    this.scrapeHooks.delete(owner);
  }

  /** Runs the scrape hooks once, however many gauges ask, bounded by SCRAPE_REFRESH_TIMEOUT_MS. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const hooks = [...this.scrapeHooks.values()].map((hook) => Promise.resolve().then(hook));
        await withTimeout(Promise.all(hooks), SCRAPE_REFRESH_TIMEOUT_MS);
      } catch {
        this.scrapeRefreshFailures.inc();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * The `onCall` of every TelegramClients: counts each Bot API call and each failure by
   * bot, method and result code. Method names come from clients and targets, so a
   * method Telegram does not know (404) is `unknown` and, past MAX_METHOD_LABELS
   * distinct names, new ones share `other`: nobody can grow the label set.
   */
  recordTelegramCall(event: TelegramCallEvent): void {
    const bot = event.botId ?? 'unknown';
    const method = this.telegramMethodLabel(event);
    const code = event.ok ? 200 : (event.errorCode ?? 0);
    const key = `${bot}\n${method}\n${code}`;
    let pending = this.pendingCalls.get(key);
    if (!pending) {
      pending = { labels: { bot, method, code: String(code) }, calls: 0, errors: 0 };
      this.pendingCalls.set(key, pending);
    }
    pending.calls += 1;
    if (!event.ok) pending.errors += 1;
  }

  private flushTelegramCalls(): void {
    for (const pending of this.pendingCalls.values()) {
      if (pending.calls > 0) this.telegramCalls.inc(pending.labels, pending.calls);
      if (pending.errors > 0) this.telegramErrors.inc(pending.labels, pending.errors);
      pending.calls = 0;
      pending.errors = 0;
    }
  }

  private telegramMethodLabel(event: TelegramCallEvent): string {
    if (event.errorCode === NOT_FOUND) return 'unknown';
    if (this.telegramMethods.has(event.method)) return event.method;
    if (this.telegramMethods.size >= MAX_METHOD_LABELS) return 'other';
    this.telegramMethods.add(event.method);
    return event.method;
  }
}
