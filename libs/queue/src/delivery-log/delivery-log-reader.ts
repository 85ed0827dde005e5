import type {
  AttemptPage,
  AttemptQuery,
  DeliveryState,
  LoggedAttempt,
  TracedDelivery,
  UpdateTrace,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { entryPrefix } from '../lanes/delivery-entry';
import { isSpreadLane, ownLane } from '../lanes/spread-lanes';
import {
  loggedUpdateId,
  matchesStatus,
  parseAttempt,
  parseUpdate,
  type LoggedUpdate,
  type StreamEntry,
} from './delivery-log-entries';

/** Entries read per XRANGE / XREVRANGE call while scanning a log. */
const SCAN_CHUNK = 500;
/** Lane entries read per LRANGE call while looking for a delivery in its lane. */
const LANE_CHUNK = 200;

export const ATTEMPT_PAGE_DEFAULT = 50;
export const ATTEMPT_PAGE_MAX = 200;

/**
 * Reads the delivery log the scripts write (DELIVERY_LOG_LUA): an update's fan-out and
 * each delivery's attempts and state, and a route's attempts page by page. Entries older
 * than `delivery_log.max_age` are never returned, even those the next write has not
 * trimmed yet.
 */
export class DeliveryLogReader {
  constructor(private readonly ctx: QueueContext) {}

  /** The update as the log has it, or null when it is not (or no longer) there. */
  async trace(bot: string, updateId: number, now = Date.now()): Promise<UpdateTrace | null> {
    const found = await this.#findUpdate(bot, updateId, this.#oldest(now));
    if (!found) return null;
    const { first, duplicates } = found;
    const deliveries: TracedDelivery[] = [];
    for (const d of first.deliveries) {
      // From the update's millisecond, not its id: the two streams number entries of
      // one millisecond each on their own.
      const attempts = await this.#attemptsOf(d.route, d.deliveryId, String(first.at));
      deliveries.push({
        route: d.route,
        deliveryId: d.deliveryId,
        attempts,
        ...(await this.#stateOf(d.lane, d.deliveryId, attempts)),
      });
    }
    return {
      bot,
      updateId,
      status: first.status,
      receivedAt: first.at,
      duplicatesAt: duplicates.map((entry) => entry.at).reverse(),
      deliveries,
    };
  }

  /** A route's attempts, newest first, `query.limit` (1-200, default 50) at a time. */
  async attempts(route: string, query: AttemptQuery = {}, now = Date.now()): Promise<AttemptPage> {
    const key = this.ctx.keys.attemptLog(route);
    const limit = Math.min(
      Math.max(Math.trunc(query.limit ?? ATTEMPT_PAGE_DEFAULT), 1),
      ATTEMPT_PAGE_MAX,
    );
    const start = String(Math.max(query.since ?? 0, this.#oldest(now)));
    let end = query.cursor
      ? `(${query.cursor}`
      : query.until !== undefined
        ? `(${Math.max(query.until, 0)}-0`
        : '+';
    const found: LoggedAttempt[] = [];
    while (found.length <= limit) {
      const chunk = (await this.ctx.redis.xrevrange(
        key,
        end,
        start,
        'COUNT',
        SCAN_CHUNK,
      )) as StreamEntry[];
      for (const entry of chunk) {
        const attempt = parseAttempt(route, entry);
        if (attempt && matchesStatus(attempt, query.status)) found.push(attempt);
        if (found.length > limit) break;
      }
      if (chunk.length < SCAN_CHUNK) break;
      end = `(${chunk[chunk.length - 1][0]}`;
    }
    const page = found.slice(0, limit);
    return {
      attempts: page,
      nextCursor: found.length > limit ? page[page.length - 1].id : null,
    };
  }

  /** Entries older than this (ms) count as gone. */
  #oldest(now: number): number {
    return Math.max(now - this.ctx.deliveryLog.maxAgeMs, 0);
  }

  /**
   * Newest first until the update's first arrival (queued or ignored): its repeats are
   * newer, since the dedup mark turns away every later arrival. When only repeats are
   * left, the oldest stands for the first.
   */
  async #findUpdate(
    bot: string,
    updateId: number,
    oldest: number,
  ): Promise<{ first: LoggedUpdate; duplicates: LoggedUpdate[] } | undefined> {
    const key = this.ctx.keys.updateLog(bot);
    const wanted = String(updateId);
    const duplicates: LoggedUpdate[] = [];
    let end = '+';
    for (;;) {
      const chunk = (await this.ctx.redis.xrevrange(
        key,
        end,
        String(oldest),
        'COUNT',
        SCAN_CHUNK,
      )) as StreamEntry[];
      for (const entry of chunk) {
        if (loggedUpdateId(entry[1]) !== wanted) continue;
        const update = parseUpdate(entry);
        if (!update) continue;
        if (update.status !== 'duplicate') return { first: update, duplicates };
        duplicates.push(update);
      }
      if (chunk.length < SCAN_CHUNK) break;
      end = `(${chunk[chunk.length - 1][0]}`;
    }
    const first = duplicates.pop();
    return first ? { first, duplicates } : undefined;
  }

  /** A delivery's attempts, oldest first: the route's log from the update's arrival on. */
  async #attemptsOf(route: string, deliveryId: string, from: string): Promise<LoggedAttempt[]> {
    const key = this.ctx.keys.attemptLog(route);
    const attempts: LoggedAttempt[] = [];
    let start = from;
    for (;;) {
      const chunk = (await this.ctx.redis.xrange(
        key,
        start,
        '+',
        'COUNT',
        SCAN_CHUNK,
      )) as StreamEntry[];
      for (const entry of chunk) {
        const attempt = parseAttempt(route, entry);
        if (attempt?.deliveryId === deliveryId) attempts.push(attempt);
      }
      if (chunk.length < SCAN_CHUNK) break;
      start = `(${chunk[chunk.length - 1][0]}`;
    }
    return attempts;
  }

  /**
   * Where the delivery is now. A last attempt that delivered settles it without a look
   * at the lane, which may be long; so does a death whose dead letter is still filed.
   * Otherwise its lane (after a detach, its own lane first): the head with a next attempt
   * set is retrying, anywhere else in the lane queued (a re-sent dead letter is back in
   * one); then a dead letter filed without an attempt (its route removed).
   */
  async #stateOf(
    lane: string,
    deliveryId: string,
    attempts: readonly LoggedAttempt[],
  ): Promise<{ state: DeliveryState; nextAttemptAt: number | null }> {
    const last = attempts[attempts.length - 1]?.outcome;
    if (last === 'delivered') return { state: 'delivered', nextAttemptAt: null };
    const filed = (await this.ctx.redis.exists(this.ctx.keys.deadLetter(deliveryId))) > 0;
    if (filed) return { state: 'dead', nextAttemptAt: null };
    const lanes = isSpreadLane(lane) ? [ownLane(lane, deliveryId), lane] : [lane];
    for (const candidate of lanes) {
      const place = await this.#placeInLane(candidate, deliveryId);
      if (place === 'head') {
        const nextAt = Number(
          await this.ctx.redis.hget(this.ctx.keys.laneState(candidate), 'next_at'),
        );
        // Set once an attempt failed: due or not yet, the head is being retried.
        if (nextAt > 0) return { state: 'retrying', nextAttemptAt: nextAt };
        return { state: 'queued', nextAttemptAt: null };
      }
      if (place === 'queued') return { state: 'queued', nextAttemptAt: null };
    }
    // Dead and its letter deleted since, or the log and the lane no longer say.
    return { state: last === 'dead' ? 'dead' : 'unknown', nextAttemptAt: null };
  }

  async #placeInLane(lane: string, deliveryId: string): Promise<'head' | 'queued' | undefined> {
    const key = this.ctx.keys.lane(lane);
    const prefix = Buffer.from(entryPrefix(deliveryId));
    for (let from = 0; ; from += LANE_CHUNK) {
      const chunk = await this.ctx.redis.lrangeBuffer(key, from, from + LANE_CHUNK - 1);
      const index = chunk.findIndex((entry) => entry.subarray(0, prefix.length).equals(prefix));
      if (index >= 0) return from + index === 0 ? 'head' : 'queued';
      if (chunk.length < LANE_CHUNK) return undefined;
    }
  }
}
