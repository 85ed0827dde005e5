import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { errorMessage, RELAYGRAM_LOGGER } from '@relaygram/contracts';
import { QUEUE_CONTEXT, readBotStats, readRouteStats, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';
import { withTimeout } from '../timeout';
import {
  CHART_MINUTES,
  latencyField,
  minuteOf,
  MINUTE_BUCKET_TTL_S,
  QUEUE_FIELD,
  type ChartScope,
  type CountField,
} from './minute-buckets';
import { PendingCounts } from './pending-counts';

/** How often a process writes what it counted: the charts lag this much at most. */
export const MINUTE_STATS_FLUSH_MS = 5000;
const FLUSH_TIMEOUT_MS = 3000;

/**
 * The charts' minute buckets (issue 19): ingress and dispatcher count here, in memory,
 * and every FLUSH period one pipeline of HINCRBY/EXPIRE adds the counts to Redis, where
 * every process's admin API reads them. Nothing is written per update or delivery.
 *
 * A failed flush (Redis away) is logged once per outage and its counts are kept for the
 * next one, up to the charted hour; deliveries never wait for it nor see its errors.
 *
 * Queue depths are sampled, not counted: once per period, by whichever process takes the
 * period's lease first (one SET NX), every route's and bot's waiting count is written
 * to the current minute, the last sample of a minute standing for it. Read on demand
 * they would chart only the present; sampled by every replica they would cost reads
 * growing with the replicas, for the same numbers.
 */
@Injectable()
export class MinuteStatsRecorder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #pending = new PendingCounts();
  /** Each name's key of its latest minute: built once a minute, not once a count. */
  readonly #keys: Record<ChartScope, Map<string, { minute: number; key: string }>> = {
    bot: new Map(),
    route: new Map(),
  };
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #failing = false;

  constructor(
    private readonly config: ConfigService,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.#timer = setInterval(() => void this.flush(), MINUTE_STATS_FLUSH_MS);
    this.#timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  count(scope: ChartScope, name: string, field: CountField, n = 1, at = Date.now()): void {
    const minute = minuteOf(at);
    this.#pending.add(this.#keyOf(scope, name, minute), minute, field, n);
  }

  /** One delivery's latency, from acceptance to the 2xx. */
  latency(scope: ChartScope, name: string, seconds: number, at = Date.now()): void {
    const minute = minuteOf(at);
    this.#pending.add(this.#keyOf(scope, name, minute), minute, latencyField(seconds), 1);
  }

  #keyOf(scope: ChartScope, name: string, minute: number): string {
    const latest = this.#keys[scope].get(name);
    if (latest?.minute === minute) return latest.key;
    const key = this.ctx.keys.minuteStats(scope, name, minute);
    this.#keys[scope].set(name, { minute, key });
    return key;
  }

  /** Writes what was counted (and a depth sample when this process holds the period). */
  flush(): Promise<void> {
    // One flush at a time: a slow one must not be overtaken and its counts doubled.
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    const now = Date.now();
    const taken = this.#pending.take();
    try {
      const depths = await withTimeout(this.#sampleDepths(now), FLUSH_TIMEOUT_MS);
      if (!taken.size && !depths.length) return this.#recovered();
      const pipeline = this.ctx.redis.pipeline();
      for (const [key, bucket] of taken) {
        for (const [field, n] of bucket.fields) pipeline.hincrby(key, field, n);
        pipeline.expire(key, MINUTE_BUCKET_TTL_S);
      }
      for (const [key, queued] of depths) {
        pipeline.hset(key, QUEUE_FIELD, queued);
        pipeline.expire(key, MINUTE_BUCKET_TTL_S);
      }
      const results = (await withTimeout(pipeline.exec(), FLUSH_TIMEOUT_MS)) ?? [];
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      this.#recovered();
    } catch (error) {
      // A pipeline cut short may have written part of it: counting it again may count
      // some twice, which a chart of the last hour can bear better than losing them.
      this.#pending.merge(taken, minuteOf(now) - CHART_MINUTES + 1);
      if (!this.#failing) {
        this.#failing = true;
        this.logger.warn(
          { err: errorMessage(error) },
          'chart counts not written to Redis; kept for the next flush',
        );
      }
    }
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.logger.info('chart counts written to Redis again');
  }

  /** Every route's and bot's waiting count, when this process samples this period. */
  async #sampleDepths(now: number): Promise<[string, number][]> {
    const { redis, keys } = this.ctx;
    const { routes, bots } = this.config.config;
    if (!routes.length && !bots.length) return [];
    const lease = await redis.set(
      keys.minuteDepthLease,
      '1',
      'PX',
      MINUTE_STATS_FLUSH_MS - 500,
      'NX',
    );
    if (lease !== 'OK') return [];
    const minute = minuteOf(now);
    const [routeStats, botStats] = await Promise.all([
      Promise.all(routes.map((route) => readRouteStats(this.ctx, route.name))),
      Promise.all(bots.map((bot) => readBotStats(this.ctx, bot.id))),
    ]);
    return [
      ...routes.map(
        (route, i) =>
          [keys.minuteStats('route', route.name, minute), routeStats[i].queued] as [string, number],
      ),
      ...bots.map(
        (bot, i) =>
          [keys.minuteStats('bot', bot.id, minute), botStats[i].queued] as [string, number],
      ),
    ];
  }
}
