/** Counts of one minute hash not yet written to Redis. */
export interface PendingBucket {
  readonly minute: number;
  readonly fields: Map<string, number>;
}

/**
 * The counts a process gathered since its last flush, by Redis key. A failed flush puts
 * its counts back (`merge`), so a short Redis outage loses nothing; minutes past the
 * charted hour are dropped then, so an outage never grows this beyond an hour's keys.
 */
export class PendingCounts {
  #buckets = new Map<string, PendingBucket>();

  get size(): number {
    return this.#buckets.size;
  }

  add(key: string, minute: number, field: string, n: number): void {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = { minute, fields: new Map() };
      this.#buckets.set(key, bucket);
    }
    bucket.fields.set(field, (bucket.fields.get(field) ?? 0) + n);
  }

  /** Everything gathered so far; the counts start again from nothing. */
  take(): Map<string, PendingBucket> {
    const taken = this.#buckets;
    this.#buckets = new Map();
    return taken;
  }

  /** Puts back the counts of a failed flush, keeping only minutes from `oldestMinute`. */
  merge(failed: ReadonlyMap<string, PendingBucket>, oldestMinute: number): void {
    for (const [key, bucket] of failed) {
      if (bucket.minute < oldestMinute) continue;
      for (const [field, n] of bucket.fields) this.add(key, bucket.minute, field, n);
    }
    for (const [key, bucket] of this.#buckets) {
      if (bucket.minute < oldestMinute) this.#buckets.delete(key);
    }
  }
}
