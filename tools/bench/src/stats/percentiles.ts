/**
 * Latency samples kept whole (a float per request): a run of a few hundred thousand
 * requests costs a few MB, and the percentiles are exact instead of bucketed, so two
 * runs compared by ratio differ only by what was measured.
 */
export class Samples {
  private values: Float64Array;
  private size = 0;
  private sorted = true;

  constructor(initialCapacity = 1024) {
    this.values = new Float64Array(Math.max(1, initialCapacity));
  }

  get count(): number {
    return this.size;
  }

  add(value: number): void {
    if (!Number.isFinite(value)) return;
    if (this.size === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    if (this.size > 0 && value < this.values[this.size - 1]) this.sorted = false;
    this.values[this.size++] = value;
  }

  addAll(values: Iterable<number>): void {
    for (const value of values) this.add(value);
  }

  /** A copy of the recorded values, in recording order until a percentile was asked. */
  toArray(): number[] {
    return Array.from(this.values.subarray(0, this.size));
  }

  percentile(p: number): number | undefined {
    return percentileOfSorted(this.sortedView(), p);
  }

  summary(): LatencySummary {
    return summarizeSorted(this.sortedView());
  }

  clear(): void {
    this.size = 0;
    this.sorted = true;
  }

  private sortedView(): Float64Array {
    const view = this.values.subarray(0, this.size);
    if (!this.sorted) {
      view.sort();
      this.sorted = true;
    }
    return view;
  }
}

/**
 * Nearest-rank percentile: the smallest value with at least p% of the samples at or
 * below it. p = 0 gives the minimum, p = 100 the maximum; undefined when empty.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number | undefined {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const n = sorted.length;
  if (n === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[Math.min(n, rank) - 1];
}

export function percentile(values: readonly number[], p: number): number | undefined {
  return percentileOfSorted(Float64Array.from(values).sort(), p);
}

export interface LatencySummary {
  count: number;
  min?: number;
  mean?: number;
  p50?: number;
  p90?: number;
  p99?: number;
  max?: number;
}

export function summarizeSorted(sorted: ArrayLike<number>): LatencySummary {
  const n = sorted.length;
  if (n === 0) return { count: 0 };
  let total = 0;
  for (let i = 0; i < n; i++) total += sorted[i];
  return {
    count: n,
    min: sorted[0],
    mean: total / n,
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[n - 1],
  };
}

export function summarize(values: readonly number[]): LatencySummary {
  return summarizeSorted(Float64Array.from(values).sort());
}
