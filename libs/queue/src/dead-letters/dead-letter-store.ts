import { DEAD_LETTER_RETENTION_MS, DeadReason, type LaneKey, laneId } from '@relaygram/contracts';
import { Cluster, type Redis } from 'ioredis';
import type { QueueContext } from '../queue-context';
import type { RelaygramRedis } from '../redis/redis-client';
import { decodeEntry, encodeEntry } from '../lanes/delivery-entry';
import type { DrainScheduler } from '../lanes/drain-scheduler';
import { PullStore } from '../pull/pull-store';
import { routePrefix } from '../lanes/drain-script-io';
import {
  DELETE_DEAD,
  parseDeleteDeadReply,
  parseReplayReply,
  REPLAY,
} from '../scripts/dead-letter.lua';

export interface DeadLetter {
  deliveryId: string;
  route: string;
  bot: string;
  updateId: number;
  /** The update's bytes as received. */
  update: Buffer;
  reason: DeadReason;
  attempts: number;
  lastStatus?: number;
  lastBody?: string;
  lastError?: string;
  acceptedAt: number;
  deadAt: number;
}

export interface DeadLetterFilter {
  route?: string;
  bot?: string;
  reason?: DeadReason;
}

export interface DeadLetterPage {
  items: DeadLetter[];
  /** Pass back as `cursor` for the next (older) page; absent on the last page. */
  nextCursor?: string;
}

/**
 * Where a re-sent delivery goes: the lane its route's current ordering gives it; for a
 * pull route (`pull: true`), its one lane per bot, where its client takes it.
 */
export type LaneResolver = (
  letter: DeadLetter,
) => { lane: LaneKey; pull?: boolean } | { error: string };

export type ReplayOutcome = 'queued' | 'missing' | { error: string };

interface CursorPosition {
  score: number;
  n: number;
}

function parseCursor(cursor: string | undefined): CursorPosition | undefined {
  if (!cursor) return undefined;
  const [score, n] = cursor.split(':').map(Number);
  if (!Number.isFinite(score) || !Number.isInteger(n) || n < 0)
    throw new RangeError('cursor: not a cursor of this list');
  return { score, n };
}

function formatCursor(position: CursorPosition | undefined): string | undefined {
  return position ? `${position.score}:${position.n}` : undefined;
}

/** Move the position past one entry read in score order. */
function advance(position: CursorPosition | undefined, score: number): CursorPosition {
  if (!position) return { score, n: 1 };
  if (position.score === score) position.n += 1;
  else {
    position.score = score;
    position.n = 1;
  }
  return position;
}

function toDeadLetter(deliveryId: string, hash: Record<string, Buffer>): DeadLetter | undefined {
  if (!hash.entry) return undefined;
  const entry = decodeEntry(hash.entry);
  const text = (name: string) => (hash[name] ? hash[name].toString('utf8') : undefined);
  const num = (name: string) => (hash[name] ? Number(hash[name].toString()) : undefined);
  return {
    deliveryId,
    route: entry.route,
    bot: entry.bot,
    updateId: entry.updateId,
    update: entry.body,
    reason: (text('reason') ?? DeadReason.Rejected) as DeadReason,
    attempts: num('attempts') ?? 0,
    lastStatus: num('last_status'),
    lastBody: text('last_body'),
    lastError: text('last_error'),
    acceptedAt: entry.acceptedAt,
    deadAt: num('dead_at') ?? 0,
  };
}

/**
 * Dead letters: the hash per delivery (kept 7 days) and three time-ordered indexes
 * (all, by route, by bot). Index entries whose hash expired are dropped as they are met.
 */
export class DeadLetterStore {
  readonly #pull: PullStore;

  constructor(
    private readonly ctx: QueueContext,
    private readonly scheduler: DrainScheduler,
  ) {
    this.#pull = new PullStore(ctx);
  }

  async get(deliveryId: string): Promise<DeadLetter | undefined> {
    const hash = (await this.ctx.redis.hgetallBuffer(
      this.ctx.keys.deadLetter(deliveryId),
    )) as Record<string, Buffer>;
    return toDeadLetter(deliveryId, hash);
  }

  /**
   * Newest first, `limit` 1-500. The cursor is `<score>:<n>`: continue after the first n
   * entries with that time of death. Re-sends and deletes between pages can shift an
   * entry of the same millisecond past a page boundary; new deaths never do (they are
   * newer than any cursor).
   */
  async list(filter: DeadLetterFilter = {}, limit = 50, cursor?: string): Promise<DeadLetterPage> {
    const { keys, redis } = this.ctx;
    const index = filter.route
      ? keys.deadByRoute(filter.route)
      : filter.bot
        ? keys.deadByBot(filter.bot)
        : keys.deadIndex;
    const size = Math.min(Math.max(Math.trunc(limit) || 50, 1), 500);
    const fetch = size * 2;
    let position = parseCursor(cursor);
    const items: DeadLetter[] = [];
    for (;;) {
      const max = position ? String(position.score) : '+inf';
      const batch = await redis.zrevrangebyscore(
        index,
        max,
        '-inf',
        'WITHSCORES',
        'LIMIT',
        position?.n ?? 0,
        fetch,
      );
      const entries: { id: string; score: number }[] = [];
      for (let i = 0; i < batch.length; i += 2)
        entries.push({ id: batch[i], score: Number(batch[i + 1]) });
      const pipeline = redis.pipeline();
      for (const { id } of entries) pipeline.hgetallBuffer(keys.deadLetter(id));
      const hashes = entries.length ? ((await pipeline.exec()) ?? []) : [];
      const expired: string[] = [];
      for (let i = 0; i < entries.length; i++) {
        const { id, score } = entries[i];
        position = advance(position, score);
        const [error, hash] = hashes[i] ?? [];
        const letter = error ? undefined : toDeadLetter(id, hash as Record<string, Buffer>);
        if (!letter) {
          expired.push(id);
          continue;
        }
        if (filter.route && letter.route !== filter.route) continue;
        if (filter.bot && letter.bot !== filter.bot) continue;
        if (filter.reason && letter.reason !== filter.reason) continue;
        items.push(letter);
        if (items.length === size) {
          if (expired.length) await this.dropFromIndex(index, expired);
          const more = i < entries.length - 1 || (await this.hasMore(index, position));
          return { items, nextCursor: more ? formatCursor(position) : undefined };
        }
      }
      if (expired.length) await this.dropFromIndex(index, expired);
      if (entries.length < fetch) return { items };
    }
  }

  private async hasMore(index: string, position: CursorPosition): Promise<boolean> {
    const next = await this.ctx.redis.zrevrangebyscore(
      index,
      String(position.score),
      '-inf',
      'LIMIT',
      position.n,
      1,
    );
    return next.length > 0;
  }

  private async dropFromIndex(index: string, ids: string[]): Promise<void> {
    // The hash expired, so its route and bot are unknown here: the global index and the
    // one being read are cleaned now, the other per-route and per-bot ones by prune().
    const { redis, keys } = this.ctx;
    const pipeline = redis.pipeline().zrem(keys.deadIndex, ...ids);
    if (index !== keys.deadIndex) pipeline.zrem(index, ...ids);
    await pipeline.exec();
  }

  /** Counts of current dead letters of one route (or bot). */
  async countByRoute(route: string): Promise<number> {
    return this.ctx.redis.zcard(this.ctx.keys.deadByRoute(route));
  }

  async countByBot(bot: string): Promise<number> {
    return this.ctx.redis.zcard(this.ctx.keys.deadByBot(bot));
  }

  /**
   * Re-send one dead letter to the tail of its lane, with the same delivery id and
   * fresh attempt counters; max_age then counts from the re-send.
   */
  async replay(
    deliveryId: string,
    resolveLane: LaneResolver,
    now = Date.now(),
  ): Promise<ReplayOutcome> {
    const { keys, redis } = this.ctx;
    const letter = await this.get(deliveryId);
    if (!letter) return 'missing';
    const resolved = resolveLane(letter);
    if ('error' in resolved) return { error: resolved.error };
    const lane = laneId(letter.route, letter.bot, resolved.lane);
    const entry = encodeEntry({
      deliveryId,
      updateId: letter.updateId,
      bot: letter.bot,
      route: letter.route,
      acceptedAt: letter.acceptedAt,
      replayedAt: now,
      body: letter.update,
    });
    // A pull lane is never scheduled: the re-send waits there for its client.
    if ('pull' in resolved && resolved.pull)
      return this.#pull.replay(letter.route, letter.bot, deliveryId, entry, now);
    const call = REPLAY.encode(
      {
        deadLetter: keys.deadLetter(deliveryId),
        deadIndex: keys.deadIndex,
        deadByRoute: keys.deadByRoute(letter.route),
        deadByBot: keys.deadByBot(letter.bot),
        lane: keys.lane(lane),
        laneState: keys.laneState(lane),
        routes: keys.routes,
        botStats: keys.botStats(letter.bot),
        deliveryId,
        laneId: lane,
        entry,
      },
      routePrefix(keys, letter.route, now),
    );
    const jobs = parseReplayReply(await redis.rgReplay(...call));
    if (!jobs) return 'missing';
    // A crash before the add leaves an armed entry with no job: the reconciler re-arms.
    await this.scheduler.add(jobs);
    return 'queued';
  }

  /** Re-send every dead letter matching the filter, oldest first. */
  async replayAll(
    filter: DeadLetterFilter,
    resolveLane: LaneResolver,
    onProgress?: (done: number, outcome: ReplayOutcome, deliveryId: string) => void,
  ): Promise<{ queued: number; failed: number }> {
    let queued = 0;
    let failed = 0;
    let cursor: string | undefined;
    const ids: string[] = [];
    do {
      const page = await this.list(filter, 500, cursor);
      ids.push(...page.items.map((l) => l.deliveryId));
      cursor = page.nextCursor;
    } while (cursor);
    ids.reverse();
    for (const id of ids) {
      const outcome = await this.replay(id, resolveLane);
      if (outcome === 'queued') queued += 1;
      else if (outcome !== 'missing') failed += 1;
      onProgress?.(queued + failed, outcome, id);
    }
    return { queued, failed };
  }

  async delete(deliveryId: string): Promise<boolean> {
    const { keys, redis } = this.ctx;
    const letter = await this.get(deliveryId);
    const route = letter?.route ?? '';
    const bot = letter?.bot ?? '';
    const call = DELETE_DEAD.encode({
      deadLetter: keys.deadLetter(deliveryId),
      deadIndex: keys.deadIndex,
      deadByRoute: keys.deadByRoute(route),
      deadByBot: keys.deadByBot(bot),
      deliveryId,
    });
    return parseDeleteDeadReply(await redis.rgDeleteDead(...call));
  }

  /**
   * Drop index entries older than the retention (their hashes have expired) from the
   * global index and those of every route and bot: the given ones, every route that ever
   * had a lane, and every index found in Redis, so the indexes of routes and bots a
   * reload removed are pruned too.
   */
  async prune(routes: readonly string[], bots: readonly string[], now = Date.now()): Promise<void> {
    const { keys, redis } = this.ctx;
    const before = now - DEAD_LETTER_RETENTION_MS;
    const everSeen = await redis.smembers(keys.routes);
    const indexes = new Set<string>([
      ...[...routes, ...everSeen].map((route) => keys.deadByRoute(route)),
      ...bots.map((bot) => keys.deadByBot(bot)),
      ...(await scanKeys(redis, `${keys.deadByRoute('')}*`)),
      ...(await scanKeys(redis, `${keys.deadByBot('')}*`)),
    ]);
    const pipeline = redis.pipeline();
    pipeline.zremrangebyscore(keys.deadIndex, '-inf', `(${before}`);
    for (const index of indexes) pipeline.zremrangebyscore(index, '-inf', `(${before}`);
    await pipeline.exec();
  }
}

/**
 * Keys matching a pattern, on one server or on every primary of a cluster (an install's
 * keys share one slot there, so they sit on one of them). Hourly housekeeping only.
 */
async function scanKeys(redis: RelaygramRedis, pattern: string): Promise<string[]> {
  const servers: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis as Redis];
  const found: string[] = [];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}
