import {
  DEAD_LETTER_RETENTION_MS,
  DeadReason,
  UPDATE_TYPES,
  laneId,
  type RedisKeys,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import {
  parsePullCount,
  parsePullKillReply,
  parsePullReplayReply,
  parsePullTakeReply,
  PULL,
  PULL_DROP,
  PULL_EXPIRE,
  PULL_KILL,
  PULL_REPLAY,
  PULL_TAKE,
} from '../scripts/pull.lua';
import type { ScriptPrefix } from '../scripts/script-layout';

/** A pull lane is one per (route, bot): every delivery of the route for that bot. */
export function pullLaneId(route: string, bot: string): string {
  return laneId(route, bot, { kind: 'shared' });
}

/** What getUpdates' allowed_updates does to the remembered setting. */
export interface AllowedUpdates {
  /** Types left out, as the scripts read them (`,a,b,`); '' leaves nothing out. */
  excluded: string;
  /** The selection as getWebhookInfo shows it; undefined for Telegram's default. */
  shown?: readonly string[];
}

const KNOWN = new Set<string>(UPDATE_TYPES);

/** Telegram's default: every type but these three, which must be asked for. */
const DEFAULT_EXCLUDED = ['chat_member', 'message_reaction', 'message_reaction_count'];

/**
 * Reads allowed_updates the way the Bot API server does: anything but a JSON array of
 * strings leaves the remembered setting as it is (undefined); names this version does
 * not know are ignored; a list naming no known type (`[]` included) selects Telegram's
 * default. Types newer than this code are never excluded: they cannot be named, and
 * the route that matched them wants them delivered.
 */
export function parseAllowedUpdates(value: unknown): AllowedUpdates | undefined {
  if (!Array.isArray(value)) return undefined;
  const selected = new Set<string>();
  for (const item of value) {
    if (typeof item !== 'string') return undefined;
    const name = item.toLowerCase();
    if (KNOWN.has(name)) selected.add(name);
  }
  if (selected.size === 0) return { excluded: `,${DEFAULT_EXCLUDED.join(',')},` };
  const excluded = UPDATE_TYPES.filter((t) => !selected.has(t));
  return {
    excluded: excluded.length ? `,${excluded.join(',')},` : '',
    shown: UPDATE_TYPES.filter((t) => selected.has(t)),
  };
}

export interface TakeRequest {
  route: string;
  bot: string;
  /** Unique per getUpdates call. */
  token: string;
  /** `claim`: a new call; `check`: a waiting call looks again. */
  mode: 'claim' | 'check';
  /** getUpdates' offset; undefined or 0 confirms nothing. */
  offset?: number;
  /** 1-100. */
  limit: number;
  /** The call waits (long polling) when nothing is there: it stays the lane's poller. */
  waits: boolean;
  maxAgeMs: number;
  /** A new allowed_updates setting, remembered for the next calls. */
  allowed?: AllowedUpdates;
  now?: number;
}

export type TakeResult =
  /** Another getUpdates of the same client and bot took over while this one waited. */
  | { kind: 'conflict' }
  | {
      kind: 'ok';
      /** The updates' bytes as received, in acceptance order. */
      updates: Buffer[];
      confirmed: number;
      expired: number;
      filtered: number;
    };

export interface PullLaneStatus {
  route: string;
  bot: string;
  /** Updates waiting for the client (served or not, unconfirmed). */
  pending: number;
  /** When its client last called getUpdates (ms), if ever. */
  polledAt?: number;
  /** The client's remembered allowed_updates, if it set one (undefined: Telegram's default). */
  allowedUpdates?: readonly string[] | 'default';
}

export interface PullSweepReport {
  expired: number;
  routeRemoved: number;
}

export interface PullSweepRoute {
  name: string;
  bots: readonly string[];
  maxAgeMs: number;
}

/** A pull route unreported by every gateway for this long has its lanes go dead as route_removed. */
export const PULL_ROUTE_REMOVED_AFTER_MS = 5 * 60_000;
/** One script scans or moves at most this many entries, so none holds Redis for long. */
export const PULL_SCRIPT_BATCH = 1000;

/**
 * The pull lanes of pull routes (scripts/pull.lua.ts): getUpdates takes from them,
 * confirms by offset, remembers allowed_updates; entries past max_age and the lanes of
 * removed routes go to dead letters; a re-sent dead letter goes back to its lane.
 * Ingress appends to them through the ordinary enqueue (`pull: true` deliveries).
 */
export class PullStore {
  constructor(private readonly ctx: QueueContext) {}

  async take(request: TakeRequest): Promise<TakeResult> {
    const { keys, redis } = this.ctx;
    const call = PULL_TAKE.encode(
      {
        token: request.token,
        mode: request.mode,
        offset: request.offset ? Math.trunc(request.offset) : '',
        limit: Math.min(100, Math.max(1, Math.trunc(request.limit))),
        waits: request.waits ? 1 : 0,
        maxAgeMs: Math.max(0, Math.trunc(request.maxAgeMs)),
        excluded: request.allowed ? request.allowed.excluded : '-',
        allowed: request.allowed?.shown ? JSON.stringify(request.allowed.shown) : '',
        atMost: PULL_SCRIPT_BATCH,
        noticeChannel: keys.pullNotice(request.route),
      },
      pullPrefix(keys, request.route, request.bot, request.now ?? Date.now()),
    );
    return parsePullTakeReply(await redis.rgPullTakeBuffer(...call));
  }

  /** deleteWebhook with drop_pending_updates: confirms every pending update of the lane. */
  async dropPending(route: string, bot: string, now = Date.now()): Promise<number> {
    const call = PULL_DROP.encode({}, pullPrefix(this.ctx.keys, route, bot, now));
    return parsePullCount(await this.ctx.redis.rgPullDrop(...call));
  }

  /** Moves entries past max_age at the head of the lane to dead letters as expired. */
  async expire(route: string, bot: string, maxAgeMs: number, now = Date.now()): Promise<number> {
    const call = PULL_EXPIRE.encode(
      { maxAgeMs: Math.max(0, Math.trunc(maxAgeMs)), atMost: PULL_SCRIPT_BATCH },
      pullPrefix(this.ctx.keys, route, bot, now),
    );
    let total = 0;
    for (;;) {
      const n = parsePullCount(await this.ctx.redis.rgPullExpire(...call));
      total += n;
      if (n < PULL_SCRIPT_BATCH) return total;
    }
  }

  /** Every entry of the lane goes dead (`route_removed`); its reader state goes too. */
  async kill(route: string, bot: string, reason: DeadReason, now = Date.now()): Promise<number> {
    const call = PULL_KILL.encode(
      { atMost: PULL_SCRIPT_BATCH, reason },
      pullPrefix(this.ctx.keys, route, bot, now),
    );
    let total = 0;
    for (;;) {
      const { killed, done } = parsePullKillReply(await this.ctx.redis.rgPullKill(...call));
      total += killed;
      if (done) return total;
    }
  }

  /**
   * Re-sends a dead letter of a pull route to the tail of its lane (`entry`, encoded
   * with its re-send time), waking a waiting getUpdates.
   */
  async replay(
    route: string,
    bot: string,
    deliveryId: string,
    entry: Buffer,
    now = Date.now(),
  ): Promise<'queued' | 'missing'> {
    const { keys, redis } = this.ctx;
    const call = PULL_REPLAY.encode(
      {
        deadLetter: keys.deadLetter(deliveryId),
        deliveryId,
        entry,
        noticeChannel: keys.pullNotice(route),
      },
      pullPrefix(keys, route, bot, now),
    );
    return parsePullReplayReply(await redis.rgPullReplay(...call));
  }

  /** Each lane of the routes: pending count, last poll, remembered allowed_updates. */
  async status(
    routes: readonly { name: string; bots: readonly string[] }[],
  ): Promise<PullLaneStatus[]> {
    const { keys, redis } = this.ctx;
    const lanes = routes.flatMap((route) => route.bots.map((bot) => ({ route: route.name, bot })));
    if (!lanes.length) return [];
    const pipeline = redis.pipeline();
    for (const { route, bot } of lanes) {
      const lane = pullLaneId(route, bot);
      pipeline.llen(keys.lane(lane));
      pipeline.hmget(keys.pullState(lane), 'polled_at', 'excluded', 'allowed');
    }
    const replies = (await pipeline.exec()) ?? [];
    return lanes.map(({ route, bot }, i) => {
      const [, pending] = replies[i * 2] ?? [];
      const [, state] = replies[i * 2 + 1] ?? [];
      const [polledAt, excluded, allowed] = (state ?? []) as (string | null)[];
      const status: PullLaneStatus = { route, bot, pending: Number(pending ?? 0) };
      if (polledAt) status.polledAt = Number(polledAt);
      if (excluded !== null && excluded !== undefined) {
        status.allowedUpdates = allowed ? (JSON.parse(allowed) as string[]) : 'default';
      }
      return status;
    });
  }

  /** This gateway serves these pull routes (every period, and at start and reload). */
  async reportConfigured(routes: readonly string[], now = Date.now()): Promise<void> {
    if (!routes.length) return;
    const fields: (string | number)[] = [];
    for (const route of routes) fields.push(route, now);
    await this.ctx.redis.hset(this.ctx.keys.pullRoutes, ...fields);
  }

  /**
   * The periodic clean-up (one gateway at a time): entries past max_age go dead as
   * expired whether or not their client polls; the lanes of a pull route that no
   * gateway has reported for `removedAfterMs` go dead as route_removed, and the route
   * is forgotten once they are all gone.
   */
  async sweep(
    configured: readonly PullSweepRoute[],
    options: { now?: number; removedAfterMs?: number } = {},
  ): Promise<PullSweepReport> {
    const { keys, redis } = this.ctx;
    const now = options.now ?? Date.now();
    const removedAfterMs = options.removedAfterMs ?? PULL_ROUTE_REMOVED_AFTER_MS;
    const report: PullSweepReport = { expired: 0, routeRemoved: 0 };
    await this.reportConfigured(
      configured.map((r) => r.name),
      now,
    );
    for (const route of configured) {
      for (const lane of await redis.smembers(keys.pullLanes(route.name))) {
        const bot = botOfLane(lane);
        if (bot) report.expired += await this.expire(route.name, bot, route.maxAgeMs, now);
      }
    }
    const known = new Set(configured.map((r) => r.name));
    const seen = await redis.hgetall(keys.pullRoutes);
    for (const [route, since] of Object.entries(seen)) {
      if (known.has(route) || now - Number(since) < removedAfterMs) continue;
      for (const lane of await redis.smembers(keys.pullLanes(route))) {
        const bot = botOfLane(lane);
        if (bot) report.routeRemoved += await this.kill(route, bot, DeadReason.RouteRemoved, now);
      }
      if ((await redis.scard(keys.pullLanes(route))) === 0) {
        await redis.hdel(keys.pullRoutes, route);
      }
    }
    return report;
  }
}

function botOfLane(lane: string): string | undefined {
  const parts = lane.split('.');
  return parts.length === 3 ? parts[1] : undefined;
}

/** The KEYS and ARGV every pull script starts with. */
function pullPrefix(keys: RedisKeys, route: string, bot: string, now: number): ScriptPrefix {
  const lane = pullLaneId(route, bot);
  return PULL.prefix({
    lane: keys.lane(lane),
    state: keys.pullState(lane),
    lanes: keys.pullLanes(route),
    stats: keys.routeStats(route),
    bot: keys.botStats(bot),
    deadIndex: keys.deadIndex,
    deadByRoute: keys.deadByRoute(route),
    deadByBot: keys.deadByBot(bot),
    laneId: lane,
    deadPrefix: keys.deadLetter(''),
    deadTtlMs: DEAD_LETTER_RETENTION_MS,
    now: Math.trunc(now),
  });
}
