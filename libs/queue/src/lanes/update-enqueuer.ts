import { randomUUID } from 'node:crypto';
import { DEDUP_BLOCK_BITS, DEDUP_WINDOW_SECONDS } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { ENQUEUE, parseEnqueueReply, pushDelivery } from '../scripts/enqueue.lua';
import type { ScriptArg } from '../scripts/script-layout';
import { encodeEntry } from './delivery-entry';
import type { DrainScheduler } from './drain-scheduler';
import { storedLane } from './spread-lanes';

export interface DeliveryTarget {
  route: string;
  /**
   * Lane id from `laneId()`; for `none` ordering a lane of its own (`kind: 'single'`),
   * which the store keeps in a spread lane of the route (see spread-lanes.ts).
   */
  lane: string;
  /** Made at acceptance, stable across retries and re-sends. */
  deliveryId: string;
  /**
   * A pull route's delivery (`pull:` in the config): it waits in its lane for the
   * route's client to take it with getUpdates; no drain job ever sends it.
   */
  pull?: boolean;
}

export interface UpdateToEnqueue {
  bot: string;
  updateId: number;
  /** The update's bytes exactly as received. */
  body: Buffer;
  deliveries: readonly DeliveryTarget[];
  /** Acceptance time (ms); now by default. */
  acceptedAt?: number;
}

export type EnqueueStatus = 'queued' | 'duplicate' | 'ignored';

export interface EnqueueResult {
  status: EnqueueStatus;
  deliveries: number;
  /**
   * Settles once the drain jobs the script armed are added (never rejects: a failed add
   * is reported through `onScheduleError` and repaired by the reconciler). Callers
   * answer without waiting for it.
   */
  jobsAdded: Promise<void>;
}

export function newDeliveryId(): string {
  return randomUUID();
}

const DONE = Promise.resolve();

/**
 * Ingress's one write: dedup and enqueue an update in one Lua script, which also hands
 * each newly scheduled lane to a waiting drain job, or lists it as ready and arms a job.
 *
 * Crash analysis:
 * - The script fails or Redis dies before it runs: nothing is written (every check
 *   comes before the first write), the caller answers 503 / keeps the getUpdates
 *   offset, and Telegram hands the update over again.
 * - The process dies after the script and before the armed drain jobs are added: the
 *   update is marked seen and its deliveries sit in their lanes, listed as ready, with
 *   armed entries no BullMQ job carries. The reconciler drops those entries once they
 *   are older than ARMED_JOB_GRACE_MS and arms jobs again, so the deliveries wait at
 *   most that long plus one reconcile period; nothing is lost, and Telegram's retry of
 *   the update is answered `duplicate`.
 * - The job add fails (Redis gone right after the script): same as above; the caller
 *   answers 202 anyway, because the update itself is durably accepted.
 * - A lane's scheduling fails inside the script (a key of the wrong type): the update is
 *   accepted, the failure reported; the lane stays in its route's lane set, where the
 *   reconciler finds it.
 */
export class UpdateEnqueuer {
  constructor(
    private readonly ctx: QueueContext,
    private readonly scheduler: DrainScheduler,
    private readonly onScheduleError: (error: unknown) => void = () => undefined,
    /** Chaos suite only (RELAYGRAM_FAULTS): the probability of dying between the script and the job add. */
    private readonly dieAfterScript = 0,
  ) {}

  async enqueue(update: UpdateToEnqueue): Promise<EnqueueResult> {
    const { keys, redis } = this.ctx;
    if (!Number.isSafeInteger(update.updateId) || update.updateId < 0) {
      throw new RangeError('update_id must be a non-negative safe integer');
    }
    const block = Math.floor(update.updateId / DEDUP_BLOCK_BITS);
    const offset = update.updateId % DEDUP_BLOCK_BITS;
    const acceptedAt = update.acceptedAt ?? Date.now();

    const tail: { keys: string[]; args: ScriptArg[] } = { keys: [], args: [] };
    const logged: string[] = [];
    for (const d of update.deliveries) {
      const lane = d.pull ? d.lane : storedLane(d.lane);
      logged.push(lane, d.deliveryId);
      pushDelivery(tail, {
        lane: keys.lane(lane),
        laneState: keys.laneState(lane),
        lanes: d.pull ? keys.pullLanes(d.route) : keys.routeLanes(d.route),
        ready: keys.readyLanes(d.route),
        delayed: keys.delayedLanes(d.route),
        drains: keys.drainJobs(d.route),
        drain: keys.drainState(d.route),
        idle: keys.idleJobs(d.route),
        stats: keys.routeStats(d.route),
        laneId: lane,
        route: d.route,
        entry: encodeEntry({
          deliveryId: d.deliveryId,
          updateId: update.updateId,
          bot: update.bot,
          route: d.route,
          acceptedAt,
          body: update.body,
        }),
        pullChannel: d.pull ? keys.pullNotice(d.route) : '',
      });
    }
    const log = this.ctx.deliveryLog.limits;
    const call = ENQUEUE.encode(
      {
        dedup: keys.dedup(update.bot, block),
        seq: keys.laneSeq,
        dispatchers: keys.dispatchers,
        routes: keys.routes,
        botStats: keys.botStats(update.bot),
        lanePrefix: keys.lane(''),
        statePrefix: keys.laneState(''),
        inboxPrefix: keys.inbox(''),
        now: Date.now(),
        offset,
        dedupTtl: DEDUP_WINDOW_SECONDS,
        updateLog: keys.updateLog(update.bot),
        logCap: log.updateCap,
        logMaxAge: log.maxAgeMs,
        updateId: update.updateId,
        logDeliveries: logged.join(' '),
      },
      undefined,
      tail,
    );
    const reply = parseEnqueueReply(await redis.rgEnqueue(...call));
    if (reply.duplicate) return { status: 'duplicate', deliveries: 0, jobsAdded: DONE };
    if (update.deliveries.length === 0)
      return { status: 'ignored', deliveries: 0, jobsAdded: DONE };

    for (const failure of reply.failures) {
      this.onScheduleError(new Error(`lane not scheduled (the reconciler retries): ${failure}`));
    }
    const { arms } = reply;
    if (this.dieAfterScript && arms.length && Math.random() < this.dieAfterScript) {
      process.kill(process.pid, 'SIGKILL');
    }
    const jobsAdded = arms.length
      ? this.scheduler.add({ arms, wakes: [] }).catch((error: unknown) => {
          // The update is accepted (see the crash analysis): the reconciler arms again.
          this.onScheduleError(error);
        })
      : DONE;
    return { status: 'queued', deliveries: update.deliveries.length, jobsAdded };
  }
}
