/** The charts' bucket: one minute of wall-clock time (the processes' clocks, not Redis's). */
export const MINUTE_MS = 60_000;

/** The admin page charts the last hour: this minute and the 59 before it. */
export const CHART_MINUTES = 60;

/** A bucket outlives the hour it is charted for by a few minutes, then Redis drops it. */
export const MINUTE_BUCKET_TTL_S = 65 * 60;

/**
 * Upper bounds (seconds) of the delivery-latency buckets, the same as the Prometheus
 * histogram's, so a chart and a Grafana panel cut latency the same way. A latency above
 * the last bound counts in one more bucket (`+Inf`).
 */
export const LATENCY_BOUNDS_S: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600,
]);

/** What a minute bucket is kept for: a bot (all its routes) or one route. */
export type ChartScope = 'bot' | 'route';

/**
 * The counted series. `accepted`: a bot's updates ingress took (queued, or matching no
 * route), a route's deliveries enqueued; `failed`: attempts that did not deliver
 * (retried or dead); `dead`: deliveries that went to dead letters.
 */
export const COUNT_FIELDS = ['accepted', 'delivered', 'failed', 'dead'] as const;
export type CountField = (typeof COUNT_FIELDS)[number];

/** The sampled queue depth of the minute (its last sample), a field of the same hash. */
export const QUEUE_FIELD = 'queue';

/** One minute of one bot or route, as the admin API answers it. */
export interface MinuteBucket {
  /** Start of the minute (ISO 8601). */
  at: string;
  accepted: number;
  delivered: number;
  failed: number;
  dead: number;
  /** Deliveries waiting at the minute's last sample; null when none was taken. */
  queue: number | null;
  /** Latency from acceptance to the 2xx, of the minute's deliveries; null without any. */
  p50_ms: number | null;
  p99_ms: number | null;
}

export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS);
}

/** The field counting a latency: `l<i>`, i the first bucket whose bound holds it. */
export function latencyField(
  seconds: number,
  bounds: readonly number[] = LATENCY_BOUNDS_S,
): string {
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]) i++;
  return `l${i}`;
}

/** The minutes charted at `nowMs`, oldest first, ending with the current one. */
export function chartMinutes(nowMs: number, minutes = CHART_MINUTES): number[] {
  const last = minuteOf(nowMs);
  return Array.from({ length: minutes }, (_, i) => last - minutes + 1 + i);
}

/**
 * The q-quantile (0 < q ≤ 1) of a histogram, interpolated inside the bucket it falls
 * in, as Prometheus's `histogram_quantile` does: the first bucket starts at 0, and a
 * quantile in the `+Inf` bucket is the last finite bound. Null without observations.
 */
export function histogramQuantile(
  q: number,
  counts: readonly number[],
  bounds: readonly number[] = LATENCY_BOUNDS_S,
): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i];
    if (n > 0 && below + n >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1];
      const lower = i === 0 ? 0 : bounds[i - 1];
      return lower + (bounds[i] - lower) * ((rank - below) / n);
    }
    below += n;
  }
  return bounds[bounds.length - 1];
}

/** A stored minute hash (`HGETALL`, empty when the minute saw nothing) as the API answers it. */
export function minuteBucket(
  minute: number,
  hash: Readonly<Record<string, string>>,
  bounds: readonly number[] = LATENCY_BOUNDS_S,
): MinuteBucket {
  const int = (field: string) => {
    const n = Number(hash[field] ?? 0);
    return Number.isFinite(n) ? n : 0;
  };
  const latencies = Array.from({ length: bounds.length + 1 }, (_, i) => int(`l${i}`));
  const ms = (q: number) => {
    const seconds = histogramQuantile(q, latencies, bounds);
    return seconds === null ? null : Math.round(seconds * 10_000) / 10;
  };
  return {
    at: new Date(minute * MINUTE_MS).toISOString(),
    accepted: int('accepted'),
    delivered: int('delivered'),
    failed: int('failed'),
    dead: int('dead'),
    queue: hash[QUEUE_FIELD] === undefined ? null : int(QUEUE_FIELD),
    p50_ms: ms(0.5),
    p99_ms: ms(0.99),
  };
}
