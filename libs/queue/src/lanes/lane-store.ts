import { DEAD_LETTER_RETENTION_MS, DeadReason, parseLaneId } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { entryPrefix } from './delivery-entry';
import {
  parseJobsToAdd,
  parseStep,
  routeScriptArgs,
  routeScriptKeys,
  text,
  type ClaimedHead,
  type DrainJobsToAdd,
  type DrainStep,
} from './drain-script-io';

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

/** How an attempt on a head ended, as far as the lane is concerned. */
export type FinishOutcome =
  | { kind: 'delivered' }
  | { kind: 'dead'; dead: DeadLetterInfo }
  /** The head backs off in its lane, which waits (and only it). */
  | { kind: 'retry'; retry: RetryInfo }
  /** A spread lane's head backs off in a lane of its own (`ownLane`); the lane goes on. */
  | { kind: 'detach'; retry: RetryInfo; ownLane: string }
  /** No attempt was made (shutdown): the lane is handed on as it is. */
  | { kind: 'none' };

/**
 * What the job does after the head: the next head of the same lane, another waiting
 * lane if there is one (fairness), or hand the lane on and end.
 */
export type ThenWhat = 'continue' | 'yield' | 'stop';

/** A running drain job: its route, id and BullMQ lock (key and value), which fence it. */
export interface DrainJobRef {
  route: string;
  jobId: string;
  /** The value of the job's lock: the token BullMQ gave this run of the job. */
  lock: string;
  lockKey: string;
}

export interface DrainResult {
  step: DrainStep;
  /** Drain jobs the caller adds to BullMQ (a crash before that is repaired by the reconciler). */
  jobs: DrainJobsToAdd;
}

/** Dead letters keep at most this much of the last response body. */
export const DEAD_LETTER_BODY_LIMIT = 1024;

function drainResult(reply: unknown[]): DrainResult {
  return { step: parseStep(reply[0] as unknown[]), jobs: parseJobsToAdd(reply) };
}

/**
 * The dispatcher's side of the lanes (scripts/drain.lua.ts): a drain job starts, claims
 * ready lanes and finishes their heads one after the other, waits for a hand-off when
 * nothing is ready, and ends. Every call is fenced by the job's BullMQ lock token (and
 * a lane's by its generation), so a job that lost its lock changes nothing.
 */
export class LaneStore {
  constructor(private readonly ctx: QueueContext) {}

  /**
   * The job starts, or BullMQ re-runs it: it takes back the lane it held (re-sending
   * its head), or claims the next ready lane; with nothing ready it waits on
   * `dispatcher`'s inbox, or ends when `dispatcher` is undefined.
   */
  async start(job: DrainJobRef, dispatcher?: string, now = Date.now()): Promise<DrainResult> {
    const { keys, redis } = this.ctx;
    const reply = (await redis.rgStartBuffer(
      10,
      ...routeScriptKeys(keys, job.route),
      job.lockKey,
      ...routeScriptArgs(keys, job.route, now),
      job.jobId,
      job.lock,
      dispatcher ?? '',
    )) as unknown[];
    return drainResult(reply);
  }

  /** Records how the attempt on `head` ended and goes on as `then` says. */
  async finish(
    job: DrainJobRef,
    head: ClaimedHead,
    outcome: FinishOutcome,
    then: ThenWhat,
    dispatcher?: string,
    now = Date.now(),
  ): Promise<DrainResult> {
    const { keys, redis } = this.ctx;
    const { bot } = parseLaneId(head.lane);
    const deliveryId = head.entry.deliveryId;
    const retry = outcome.kind === 'retry' || outcome.kind === 'detach' ? outcome.retry : undefined;
    const own = outcome.kind === 'detach' ? outcome.ownLane : head.lane;
    const args: (string | number)[] = [
      job.jobId,
      job.lock,
      head.lane,
      head.gen,
      entryPrefix(deliveryId),
      outcome.kind,
      then,
      dispatcher ?? '',
      DEAD_LETTER_RETENTION_MS,
      deliveryId,
      own,
      retry?.consecutive5xx ?? 0,
      retry?.lastStatus ?? 0,
      retry ? retry.lastError.slice(0, 500) : '',
      retry?.nextAttemptAt ?? 0,
      retry?.lastBody === undefined ? '' : truncateUtf8(retry.lastBody, DEAD_LETTER_BODY_LIMIT),
    ];
    if (outcome.kind === 'dead') {
      const d = outcome.dead;
      args.push('reason', d.reason, 'attempts', d.attempts, 'dead_at', Math.trunc(now));
      if (d.lastStatus !== undefined) args.push('last_status', d.lastStatus);
      if (d.lastBody !== undefined)
        args.push('last_body', truncateUtf8(d.lastBody, DEAD_LETTER_BODY_LIMIT));
      if (d.lastError !== undefined) args.push('last_error', d.lastError.slice(0, 500));
    }
    const reply = (await redis.rgFinishBuffer(
      19,
      ...routeScriptKeys(keys, job.route),
      keys.lane(head.lane),
      keys.laneState(head.lane),
      job.lockKey,
      keys.botStats(bot),
      keys.deadLetter(deliveryId),
      keys.deadIndex,
      keys.deadByRoute(job.route),
      keys.deadByBot(bot),
      keys.lane(own),
      keys.laneState(own),
      ...routeScriptArgs(keys, job.route, now),
      ...args,
    )) as unknown[];
    return drainResult(reply);
  }

  /**
   * A waiting job gives up (its linger is over, or its dispatcher stops): it ends,
   * unless a lane was handed to it meanwhile, whose begun head is then returned.
   */
  async retire(job: DrainJobRef, now = Date.now()): Promise<DrainResult> {
    const { keys, redis } = this.ctx;
    const reply = (await redis.rgRetireBuffer(
      10,
      ...routeScriptKeys(keys, job.route),
      job.lockKey,
      ...routeScriptArgs(keys, job.route, now),
      job.jobId,
      job.lock,
    )) as unknown[];
    return drainResult(reply);
  }

  /**
   * The reconciler's repair of a job that is gone: what it held goes back to the route,
   * provided its entry still reads `seen`. False when the entry changed meanwhile.
   */
  async dropJob(
    route: string,
    jobId: string,
    seen: string,
    now = Date.now(),
  ): Promise<{ dropped: boolean; jobs: DrainJobsToAdd }> {
    const { keys, redis } = this.ctx;
    const reply = (await redis.rgDropJob(
      9,
      ...routeScriptKeys(keys, route),
      ...routeScriptArgs(keys, route, now),
      jobId,
      seen,
    )) as unknown[];
    return {
      dropped: text((reply[0] as unknown[])[0]) === 'dropped',
      jobs: parseJobsToAdd(reply),
    };
  }

  /**
   * The reconciler's check of one lane: scheduled when it is neither listed nor held by
   * a live job, released when empty.
   */
  async repairLane(
    lane: string,
    now = Date.now(),
  ): Promise<{ outcome: 'ok' | 'scheduled' | 'released'; jobs: DrainJobsToAdd }> {
    const { keys, redis } = this.ctx;
    const { route } = parseLaneId(lane);
    const reply = (await redis.rgRepairLane(
      11,
      ...routeScriptKeys(keys, route),
      keys.lane(lane),
      keys.laneState(lane),
      ...routeScriptArgs(keys, route, now),
      lane,
    )) as unknown[];
    return {
      outcome: text((reply[0] as unknown[])[0]) as 'ok' | 'scheduled' | 'released',
      jobs: parseJobsToAdd(reply),
    };
  }

  /** Arms jobs for waiting lanes no job will take, and a wake for the earliest backing-off one. */
  async ensureDraining(route: string, now = Date.now()): Promise<DrainJobsToAdd> {
    const { keys, redis } = this.ctx;
    const reply = (await redis.rgEnsureDraining(
      9,
      ...routeScriptKeys(keys, route),
      ...routeScriptArgs(keys, route, now),
    )) as unknown[];
    return parseJobsToAdd(reply);
  }

  /**
   * Every delivery of a lane goes dead with `reason` (a route removed by a reload), in
   * batches; whoever held the lane turns stale. Returns how many went dead.
   */
  async killLane(lane: string, reason: DeadReason, now = Date.now()): Promise<number> {
    const { keys, redis } = this.ctx;
    const { route, bot } = parseLaneId(lane);
    let killed = 0;
    for (;;) {
      const reply = (await redis.rgKillLane(
        15,
        ...routeScriptKeys(keys, route),
        keys.lane(lane),
        keys.laneState(lane),
        keys.botStats(bot),
        keys.deadIndex,
        keys.deadByRoute(route),
        keys.deadByBot(bot),
        ...routeScriptArgs(keys, route, now),
        lane,
        reason,
        500,
        DEAD_LETTER_RETENTION_MS,
        keys.deadLetter(''),
      )) as unknown[];
      const [count, state] = reply[0] as unknown[];
      killed += Number(count);
      if (text(state) === 'done') return killed;
    }
  }

  /**
   * A dispatcher announces itself: hand-offs may go to it until `ttlMs` from now (on
   * Redis's clock), and each route's slot count is its `concurrency`.
   */
  async heartbeat(
    dispatcher: string,
    ttlMs: number,
    routes: readonly { route: string; slots: number }[],
  ): Promise<void> {
    const { keys, redis } = this.ctx;
    await redis.rgHeartbeat(
      1 + routes.length,
      keys.dispatchers,
      ...routes.map((r) => keys.drainState(r.route)),
      dispatcher,
      ttlMs,
      ...routes.map((r) => r.slots),
    );
  }

  /** The dispatcher stops taking hand-offs at once (shutdown). */
  async leave(dispatcher: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.dispatchers, dispatcher);
  }

  /** Milliseconds left on the job's BullMQ lock, or undefined when the job lost it. */
  async lockLeft(job: DrainJobRef): Promise<number | undefined> {
    const [[, holder], [, ttl]] = ((await this.ctx.redis
      .pipeline()
      .get(job.lockKey)
      .pttl(job.lockKey)
      .exec()) ?? []) as [unknown, unknown][];
    return holder === job.lock && Number(ttl) > 0 ? Number(ttl) : undefined;
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
