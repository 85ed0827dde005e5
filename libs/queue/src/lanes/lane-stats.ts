import type { QueueContext } from '../queue-context';

export interface RouteStats {
  /** Deliveries waiting in the route's lanes. */
  queued: number;
  /** Non-empty lanes. */
  lanes: number;
  /** Lanes waiting for a drain job. */
  ready: number;
  /** Lanes whose head backs off until its next attempt. */
  backingOff: number;
  /** Live drain jobs of the route (holding a lane, waiting for one, or about to start). */
  drainJobs: number;
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
  const [[, hash], [, lanes], [, dead], [, ready], [, backingOff], [, drainJobs]] = ((await redis
    .pipeline()
    .hgetall(keys.routeStats(route))
    .scard(keys.routeLanes(route))
    .zcard(keys.deadByRoute(route))
    .llen(keys.readyLanes(route))
    .zcard(keys.delayedLanes(route))
    .hlen(keys.drainJobs(route))
    .exec()) ?? []) as [unknown, unknown][];
  const h = (hash ?? {}) as Record<string, string>;
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  return {
    queued: Math.max(0, num(h.queued) ?? 0),
    lanes: Number(lanes ?? 0),
    ready: Number(ready ?? 0),
    backingOff: Number(backingOff ?? 0),
    drainJobs: Number(drainJobs ?? 0),
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
