import {
  ATTEMPT_BODY_BYTES,
  DEAD_LETTER_RETENTION_MS,
  DeadReason,
  parseLaneId,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { entryPrefix } from './delivery-entry';
import { FINISH } from '../scripts/finish.lua';
import { HEARTBEAT } from '../scripts/heartbeat.lua';
import { KILL_LANE, parseKillLaneReply } from '../scripts/kill-lane.lua';
import {
  DROP_JOB,
  ENSURE_DRAINING,
  parseDropJobReply,
  parseEnsureDrainingReply,
  parseRepairLaneReply,
  REPAIR_LANE,
} from '../scripts/reconcile.lua';
import { RETIRE } from '../scripts/retire.lua';
import { START } from '../scripts/start.lua';
import type { ScriptArg } from '../scripts/script-layout';
import {
  parseDrainResult,
  routePrefix,
  type ClaimedHead,
  type DrainJobsToAdd,
  type DrainResult,
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

/** What the delivery log keeps of an attempt, beyond what the lane knows. */
export interface AttemptRecord {
  /** The HTTP status; null without an answer. */
  readonly status: number | null;
  /** The error kind without an answer (`timeout`, `ECONNREFUSED`, `expired`); else null. */
  readonly error: string | null;
  readonly durationMs: number;
  /** The answer's body; the log keeps its first ATTEMPT_BODY_BYTES bytes. */
  readonly body?: Buffer;
}

/**
 * How an attempt on a head ended, as far as the lane is concerned; `record`, what the
 * delivery log keeps of it (an entry with empty fields when absent).
 */
export type FinishOutcome = (
  | { kind: 'delivered' }
  | { kind: 'dead'; dead: DeadLetterInfo }
  /** The head backs off in its lane, which waits (and only it). */
  | { kind: 'retry'; retry: RetryInfo }
  /** A spread lane's head backs off in a lane of its own (`ownLane`); the lane goes on. */
  | { kind: 'detach'; retry: RetryInfo; ownLane: string }
  /** No attempt was made (shutdown): the lane is handed on as it is. */
  | { kind: 'none' }
) & { readonly record?: AttemptRecord };

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

// Declared with the script replies it parses; exported here too, where drain jobs import it.
export type { DrainResult } from './drain-script-io';

/** Dead letters keep at most this much of the last response body. */
export const DEAD_LETTER_BODY_LIMIT = 1024;

/**
 * The dispatcher's side of the lanes (scripts/engine.lua.ts, a file per script): a drain
 * job starts, claims ready lanes and finishes their heads one after the other, waits for
 * a hand-off when nothing is ready, and ends. Every call is fenced by the job's BullMQ
 * lock token (and a lane's by its generation), so a job that lost its lock changes nothing.
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
    const call = START.encode(
      { lockKey: job.lockKey, jobId: job.jobId, lockToken: job.lock, dispatcher: dispatcher ?? '' },
      routePrefix(keys, job.route, now),
    );
    return parseDrainResult(await redis.rgStartBuffer(...call));
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
    const record = outcome.record;
    const log = this.ctx.deliveryLog.limits;
    const call = FINISH.encode(
      {
        lane: keys.lane(head.lane),
        laneState: keys.laneState(head.lane),
        lockKey: job.lockKey,
        botStats: keys.botStats(bot),
        deadLetter: keys.deadLetter(deliveryId),
        deadIndex: keys.deadIndex,
        deadByRoute: keys.deadByRoute(job.route),
        deadByBot: keys.deadByBot(bot),
        ownLane: keys.lane(own),
        ownLaneState: keys.laneState(own),
        jobId: job.jobId,
        lockToken: job.lock,
        laneId: head.lane,
        gen: head.gen,
        headPrefix: entryPrefix(deliveryId),
        outcome: outcome.kind,
        then,
        dispatcher: dispatcher ?? '',
        deadTtlMs: DEAD_LETTER_RETENTION_MS,
        deliveryId,
        ownLaneId: own,
        consecutive5xx: retry?.consecutive5xx ?? 0,
        lastStatus: retry?.lastStatus ?? 0,
        lastError: retry ? retry.lastError.slice(0, 500) : '',
        nextAttemptAt: retry?.nextAttemptAt ?? 0,
        lastBody:
          retry?.lastBody === undefined ? '' : truncateUtf8(retry.lastBody, DEAD_LETTER_BODY_LIMIT),
        attemptLog: keys.attemptLog(job.route),
        logCap: log.attemptCap,
        logMaxAge: log.maxAgeMs,
        updateId: head.entry.updateId,
        bot,
        attempt: head.attempt,
        logStatus: record?.status ?? '',
        logError: record?.error ?? '',
        logMs: record?.durationMs ?? 0,
        logBody: record?.body?.subarray(0, ATTEMPT_BODY_BYTES) ?? '',
      },
      routePrefix(keys, job.route, now),
      outcome.kind === 'dead' ? { args: deadLetterFields(outcome.dead, now) } : undefined,
    );
    return parseDrainResult(await redis.rgFinishBuffer(...call));
  }

  /**
   * A waiting job gives up (its linger is over, or its dispatcher stops): it ends,
   * unless a lane was handed to it meanwhile, whose begun head is then returned.
   */
  async retire(job: DrainJobRef, now = Date.now()): Promise<DrainResult> {
    const { keys, redis } = this.ctx;
    const call = RETIRE.encode(
      { lockKey: job.lockKey, jobId: job.jobId, lockToken: job.lock },
      routePrefix(keys, job.route, now),
    );
    return parseDrainResult(await redis.rgRetireBuffer(...call));
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
    const call = DROP_JOB.encode({ jobId, seen }, routePrefix(keys, route, now));
    return parseDropJobReply(await redis.rgDropJob(...call));
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
    const call = REPAIR_LANE.encode(
      { lane: keys.lane(lane), laneState: keys.laneState(lane), laneId: lane },
      routePrefix(keys, route, now),
    );
    return parseRepairLaneReply(await redis.rgRepairLane(...call));
  }

  /** Arms jobs for waiting lanes no job will take, and a wake for the earliest backing-off one. */
  async ensureDraining(route: string, now = Date.now()): Promise<DrainJobsToAdd> {
    const { keys, redis } = this.ctx;
    const call = ENSURE_DRAINING.encode({}, routePrefix(keys, route, now));
    return parseEnsureDrainingReply(await redis.rgEnsureDraining(...call));
  }

  /**
   * Every delivery of a lane goes dead with `reason` (a route removed by a reload), in
   * batches; whoever held the lane turns stale. Returns how many went dead.
   */
  async killLane(lane: string, reason: DeadReason, now = Date.now()): Promise<number> {
    const { keys, redis } = this.ctx;
    const { route, bot } = parseLaneId(lane);
    const call = KILL_LANE.encode(
      {
        lane: keys.lane(lane),
        laneState: keys.laneState(lane),
        botStats: keys.botStats(bot),
        deadIndex: keys.deadIndex,
        deadByRoute: keys.deadByRoute(route),
        deadByBot: keys.deadByBot(bot),
        laneId: lane,
        reason,
        atMost: 500,
        deadTtlMs: DEAD_LETTER_RETENTION_MS,
        deadPrefix: keys.deadLetter(''),
      },
      routePrefix(keys, route, now),
    );
    let total = 0;
    for (;;) {
      const { killed, done } = parseKillLaneReply(await redis.rgKillLane(...call));
      total += killed;
      if (done) return total;
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
    const call = HEARTBEAT.encode({ dispatchers: keys.dispatchers, dispatcher, ttlMs }, undefined, {
      keys: routes.map((r) => keys.drainState(r.route)),
      args: routes.map((r) => r.slots),
    });
    await redis.rgHeartbeat(...call);
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

/** A dead letter's fields after its entry, as the finish script files them. */
function deadLetterFields(dead: DeadLetterInfo, now: number): ScriptArg[] {
  const fields: ScriptArg[] = [
    'reason',
    dead.reason,
    'attempts',
    dead.attempts,
    'dead_at',
    Math.trunc(now),
  ];
  if (dead.lastStatus !== undefined) fields.push('last_status', dead.lastStatus);
  if (dead.lastBody !== undefined)
    fields.push('last_body', truncateUtf8(dead.lastBody, DEAD_LETTER_BODY_LIMIT));
  if (dead.lastError !== undefined) fields.push('last_error', dead.lastError.slice(0, 500));
  return fields;
}

export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  // Cut on a character boundary: drop a partial trailing sequence.
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}
