import { DEAD_LETTER_RETENTION_MS, DeadReason, parseLaneId } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { decodeEntry, entryPrefix, type DeliveryEntry } from './delivery-entry';

/** The head of a lane with its attempt state; `attempt` counts this attempt (1 = first). */
export interface LaneHead {
  entry: DeliveryEntry;
  attempt: number;
  consecutive5xx: number;
  /** What the previous attempt got, when it was retried (see `retry`). */
  lastStatus?: number;
  lastBody?: string;
  lastError?: string;
}

export type BeginResult =
  | { kind: 'stale' }
  | { kind: 'empty' }
  /** The head is backing off until `nextAttemptAt` (ms); no attempt was counted. */
  | { kind: 'wait'; nextAttemptAt: number }
  | ({ kind: 'head' } & LaneHead);

export type FinishResult =
  | { kind: 'stale' }
  | { kind: 'done' }
  | { kind: 'hold' }
  | { kind: 'yield'; gen: number }
  | ({ kind: 'head' } & LaneHead);

/** What happens to the lane after its head is finished. */
export type ThenWhat = 'continue' | 'yield' | 'hold';

export interface DeadLetterInfo {
  reason: DeadReason;
  /** Attempts made, this one included. */
  attempts: number;
  /** HTTP status of the last attempt; 0 for a network error or timeout, absent when never tried. */
  lastStatus?: number;
  /** Up to 1 KiB of the last response body. */
  lastBody?: string;
  lastError?: string;
}

export interface RetryInfo {
  consecutive5xx: number;
  /** HTTP status; 0 for a network error or timeout. */
  lastStatus: number;
  lastError: string;
  /** Up to 1 KiB of the response body (cut on a character boundary). */
  lastBody?: string;
  nextAttemptAt: number;
}

/** Dead letters keep at most this much of the last response body. */
export const DEAD_LETTER_BODY_LIMIT = 1024;

function asBuffer(value: unknown): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(String(value));
}

function parseFinish(reply: unknown[]): FinishResult {
  const kind = asBuffer(reply[0]).toString();
  switch (kind) {
    case 'head':
      return { kind: 'head', ...parseHead(reply) };
    case 'yield':
      return { kind: 'yield', gen: Number(asBuffer(reply[1]).toString()) };
    default:
      return { kind: kind as 'stale' | 'done' | 'hold' };
  }
}

function optionalText(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : asBuffer(value).toString('utf8');
}

function parseHead(reply: unknown[]): LaneHead {
  const head: LaneHead = {
    entry: decodeEntry(asBuffer(reply[1])),
    attempt: Number(asBuffer(reply[2]).toString()),
    consecutive5xx: Number(asBuffer(reply[3]).toString()),
  };
  const lastStatus = optionalText(reply[4]);
  if (lastStatus !== undefined) head.lastStatus = Number(lastStatus);
  const lastBody = optionalText(reply[5]);
  if (lastBody !== undefined) head.lastBody = lastBody;
  const lastError = optionalText(reply[6]);
  if (lastError !== undefined) head.lastError = lastError;
  return head;
}

/**
 * The dispatcher's view of lanes: begin an attempt on the head, finish it (delivered or
 * dead), record a retry. Every call names the generation of the drain job making it;
 * a stale job gets `stale` and must stop, so two jobs never work one lane.
 */
export class LaneStore {
  constructor(private readonly ctx: QueueContext) {}

  /**
   * Count an attempt on the head and return it. `now` decides whether the head's backoff
   * is over; pass `Infinity` to take the head regardless (killing a lane).
   */
  async begin(lane: string, gen: number, now = Date.now()): Promise<BeginResult> {
    const { keys, redis } = this.ctx;
    const { route } = parseLaneId(lane);
    const reply = (await redis.rgBeginBuffer(
      3,
      keys.lane(lane),
      keys.laneState(lane),
      keys.routeLanes(route),
      gen,
      lane,
      Number.isFinite(now) ? Math.trunc(now) : Number.MAX_SAFE_INTEGER,
    )) as unknown[];
    const kind = asBuffer(reply[0]).toString();
    if (kind === 'head') return { kind: 'head', ...parseHead(reply) };
    if (kind === 'wait') return { kind: 'wait', nextAttemptAt: Number(asBuffer(reply[1])) };
    return { kind: kind as 'stale' | 'empty' };
  }

  async finish(
    lane: string,
    gen: number,
    deliveryId: string,
    outcome: { delivered: true } | { delivered: false; dead: DeadLetterInfo },
    then: ThenWhat,
    now = Date.now(),
  ): Promise<FinishResult> {
    const { keys, redis } = this.ctx;
    const { route, bot } = parseLaneId(lane);
    const args: (string | number)[] = [
      gen,
      lane,
      entryPrefix(deliveryId),
      outcome.delivered ? 'delivered' : 'dead',
      then,
      now,
      DEAD_LETTER_RETENTION_MS,
      deliveryId,
    ];
    if (!outcome.delivered) {
      const d = outcome.dead;
      args.push('reason', d.reason, 'attempts', d.attempts, 'dead_at', now);
      if (d.lastStatus !== undefined) args.push('last_status', d.lastStatus);
      if (d.lastBody !== undefined)
        args.push('last_body', truncateUtf8(d.lastBody, DEAD_LETTER_BODY_LIMIT));
      if (d.lastError !== undefined) args.push('last_error', d.lastError.slice(0, 500));
    }
    const reply = (await redis.rgFinishBuffer(
      10,
      keys.lane(lane),
      keys.laneState(lane),
      keys.routeLanes(route),
      keys.routeStats(route),
      keys.laneSeq,
      keys.deadLetter(deliveryId),
      keys.deadIndex,
      keys.deadByRoute(route),
      keys.deadByBot(bot),
      keys.botStats(bot),
      ...args,
    )) as unknown[];
    return parseFinish(reply);
  }

  /**
   * Moves the head of a spread lane, which failed and will be retried, to its own lane
   * (`ownLane`), where it waits with its attempt state; then goes on with the spread
   * lane as `finish` does. `ownGen` is the own lane's new generation, which needs a
   * drain job (undefined if the own lane was scheduled already).
   */
  async detach(
    lane: string,
    gen: number,
    deliveryId: string,
    own: string,
    info: RetryInfo,
    then: ThenWhat,
  ): Promise<{ kind: 'stale' } | { kind: 'detached'; ownGen?: number; next: FinishResult }> {
    const { keys, redis } = this.ctx;
    const { route } = parseLaneId(lane);
    const reply = (await redis.rgDetachBuffer(
      6,
      keys.lane(lane),
      keys.laneState(lane),
      keys.routeLanes(route),
      keys.laneSeq,
      keys.lane(own),
      keys.laneState(own),
      gen,
      lane,
      entryPrefix(deliveryId),
      then,
      own,
      info.consecutive5xx,
      info.lastStatus,
      info.lastError.slice(0, 500),
      info.nextAttemptAt,
      info.lastBody === undefined ? '' : truncateUtf8(info.lastBody, DEAD_LETTER_BODY_LIMIT),
    )) as unknown[];
    if (reply[0] !== null && reply[0] !== undefined && asBuffer(reply[0]).toString() === 'stale') {
      return { kind: 'stale' };
    }
    const ownGen =
      reply[0] === null || reply[0] === undefined ? undefined : Number(asBuffer(reply[0]));
    return { kind: 'detached', ownGen, next: parseFinish(reply.slice(1)) };
  }

  /** Record a failed attempt; false when the job is stale. */
  async retry(lane: string, gen: number, info: RetryInfo, now = Date.now()): Promise<boolean> {
    const { keys, redis } = this.ctx;
    const { route } = parseLaneId(lane);
    const ok = await redis.rgRetry(
      2,
      keys.laneState(lane),
      keys.routeStats(route),
      gen,
      info.consecutive5xx,
      info.lastStatus,
      info.lastError.slice(0, 500),
      now,
      info.nextAttemptAt,
      info.lastBody === undefined ? '' : truncateUtf8(info.lastBody, DEAD_LETTER_BODY_LIMIT),
    );
    return Number(ok) === 1;
  }

  /** Move a lane to a new generation when it still has `gen`; undefined when it moved on. */
  async reschedule(lane: string, gen: number): Promise<number | undefined> {
    const { keys, redis } = this.ctx;
    const next = await redis.rgReschedule(2, keys.laneState(lane), keys.laneSeq, gen);
    return next === null || next === undefined ? undefined : Number(next);
  }

  /** The current generation of a scheduled lane, or undefined when it is idle. */
  async generation(lane: string): Promise<number | undefined> {
    const gen = await this.ctx.redis.hget(this.ctx.keys.laneState(lane), 'gen');
    return gen === null ? undefined : Number(gen);
  }

  async length(lane: string): Promise<number> {
    return this.ctx.redis.llen(this.ctx.keys.lane(lane));
  }

  /** Scheduled lanes of a route, in pages (SSCAN). */
  async *lanesOf(route: string, pageSize = 500): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, lanes] = await this.ctx.redis.sscan(
        this.ctx.keys.routeLanes(route),
        cursor,
        'COUNT',
        pageSize,
      );
      cursor = next;
      if (lanes.length) yield lanes;
    } while (cursor !== '0');
  }

  /**
   * Every delivery of a lane goes dead with `reason` (a route removed by a reload). Runs
   * under the lane's current generation, so a live drain job of the lane sees `stale`.
   */
  async killLane(lane: string, reason: DeadReason): Promise<number> {
    let killed = 0;
    let gen: number | undefined;
    for (;;) {
      if (gen === undefined) {
        const current = await this.generation(lane);
        if (current === undefined) return killed;
        // Take the lane away from any drain job that still holds it.
        gen = await this.reschedule(lane, current);
        if (gen === undefined) continue;
      }
      const begun = await this.begin(lane, gen, Infinity);
      if (begun.kind === 'empty') return killed;
      if (begun.kind !== 'head') {
        gen = undefined;
        continue;
      }
      const result = await this.finish(
        lane,
        gen,
        begun.entry.deliveryId,
        {
          delivered: false,
          dead: {
            reason,
            // The begin above counted an attempt that is never made.
            attempts: begun.attempt - 1,
            lastStatus: begun.lastStatus,
            lastBody: begun.lastBody || undefined,
            lastError: begun.lastError || undefined,
          },
        },
        'hold',
      );
      if (result.kind === 'stale') {
        gen = undefined;
        continue;
      }
      killed += 1;
      if (result.kind === 'done') return killed;
    }
  }
}

export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  // Cut on a character boundary: drop a partial trailing sequence.
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

export interface RouteStats {
  /** Deliveries waiting in the route's lanes. */
  queued: number;
  /** Non-empty lanes. */
  lanes: number;
  /** Deliveries delivered since the store was created. */
  delivered: number;
  /** Deliveries that went dead since the store was created (re-sent ones included). */
  deadTotal: number;
  /** Dead letters held now. */
  dead: number;
  lastError?: string;
  lastStatus?: number;
  lastErrorAt?: number;
}

export async function readRouteStats(ctx: QueueContext, route: string): Promise<RouteStats> {
  const { redis, keys } = ctx;
  const [[, hash], [, lanes], [, dead]] = ((await redis
    .pipeline()
    .hgetall(keys.routeStats(route))
    .scard(keys.routeLanes(route))
    .zcard(keys.deadByRoute(route))
    .exec()) ?? []) as [unknown, unknown][];
  const h = (hash ?? {}) as Record<string, string>;
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  return {
    queued: Math.max(0, num(h.queued) ?? 0),
    lanes: Number(lanes ?? 0),
    delivered: num(h.delivered) ?? 0,
    deadTotal: num(h.dead) ?? 0,
    dead: Number(dead ?? 0),
    lastError: h.last_error,
    lastStatus: num(h.last_status),
    lastErrorAt: num(h.last_error_at),
  };
}

export interface BotStats {
  /** Deliveries of this bot's updates waiting in lanes, all routes together. */
  queued: number;
  /** Dead letters held for this bot. */
  dead: number;
}

export async function readBotStats(ctx: QueueContext, bot: string): Promise<BotStats> {
  const { redis, keys } = ctx;
  const [[, queued], [, dead]] = ((await redis
    .pipeline()
    .hget(keys.botStats(bot), 'queued')
    .zcard(keys.deadByBot(bot))
    .exec()) ?? []) as [unknown, unknown][];
  return { queued: Math.max(0, Number(queued ?? 0)), dead: Number(dead ?? 0) };
}
