import type { Logger } from 'pino';

interface Seen {
  at: number;
  /** Occurrences since the last line. */
  count: number;
}

/**
 * Log lines of a kind that may repeat thousands of times a second (a broadcast's sends
 * meeting the same error): the first is written at once, then at most one per
 * `everyMs`, carrying `count`, the occurrences since the previous line.
 */
export class ThrottledLog {
  readonly #seen = new Map<string, Seen>();

  constructor(
    private readonly logger: Logger,
    private readonly everyMs = 60_000,
  ) {}

  warn(key: string, fields: object, message: string, now = Date.now()): void {
    const count = this.#due(key, now);
    if (count !== undefined) this.logger.warn({ ...fields, count }, message);
  }

  info(key: string, fields: object, message: string, now = Date.now()): void {
    const count = this.#due(key, now);
    if (count !== undefined) this.logger.info({ ...fields, count }, message);
  }

  /** Forgets the keys that start with `prefix` (a broadcast that ended). */
  forget(prefix: string): void {
    for (const key of this.#seen.keys()) if (key.startsWith(prefix)) this.#seen.delete(key);
  }

  #due(key: string, now: number): number | undefined {
    const seen = this.#seen.get(key);
    if (!seen) {
      this.#seen.set(key, { at: now, count: 0 });
      return 1;
    }
    seen.count++;
    if (now - seen.at < this.everyMs) return undefined;
    const { count } = seen;
    seen.at = now;
    seen.count = 0;
    return count;
  }
}
