import { randomUUID } from 'node:crypto';
import { DEDUP_BLOCK_BITS, DEDUP_WINDOW_SECONDS } from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import { encodeEntry } from './delivery-entry';
import type { DrainScheduler, LaneToSchedule } from './drain-scheduler';
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
}

export function newDeliveryId(): string {
  return randomUUID();
}

/**
 * Ingress's one write: dedup and enqueue an update in one Lua script.
 *
 * Crash analysis:
 * - The script fails or Redis dies before it runs: nothing is written (every check
 *   comes before the first write), the caller answers 503 / keeps the getUpdates
 *   offset, and Telegram hands the update over again.
 * - The process dies after the script and before the drain jobs are added: the update
 *   is marked seen and its deliveries sit in their lanes, which are marked scheduled
 *   with a generation no job carries. The reconciler finds such lanes and gives them
 *   a job, so the deliveries wait at most one reconcile period; nothing is lost, and
 *   Telegram's retry of the update is answered `duplicate`.
 * - The job add fails (Redis gone right after the script): same as above; the caller
 *   still answers 202, because the update itself is durably accepted.
 */
export class UpdateEnqueuer {
  constructor(
    private readonly ctx: QueueContext,
    private readonly scheduler: DrainScheduler,
    private readonly onScheduleError: (error: unknown) => void = () => undefined,
  ) {}

  async enqueue(update: UpdateToEnqueue): Promise<EnqueueResult> {
    const { keys, redis } = this.ctx;
    if (!Number.isSafeInteger(update.updateId) || update.updateId < 0) {
      throw new RangeError('update_id must be a non-negative safe integer');
    }
    const block = Math.floor(update.updateId / DEDUP_BLOCK_BITS);
    const offset = update.updateId % DEDUP_BLOCK_BITS;
    const acceptedAt = update.acceptedAt ?? Date.now();

    const keyArgs: string[] = [
      keys.dedup(update.bot, block),
      keys.laneSeq,
      keys.routes,
      keys.botStats(update.bot),
    ];
    const argv: (string | Buffer | number)[] = [offset, DEDUP_WINDOW_SECONDS];
    const lanes = update.deliveries.map((d) => storedLane(d.lane));
    update.deliveries.forEach((d, i) => {
      const lane = lanes[i];
      keyArgs.push(
        keys.lane(lane),
        keys.laneState(lane),
        keys.routeLanes(d.route),
        keys.routeStats(d.route),
      );
      argv.push(
        lane,
        d.route,
        encodeEntry({
          deliveryId: d.deliveryId,
          updateId: update.updateId,
          bot: update.bot,
          route: d.route,
          acceptedAt,
          body: update.body,
        }),
      );
    });
    const reply = (await redis.rgEnqueue(keyArgs.length, ...keyArgs, ...argv)) as (
      number | string
    )[];
    if (Number(reply[0]) === 0) return { status: 'duplicate', deliveries: 0 };
    if (update.deliveries.length === 0) return { status: 'ignored', deliveries: 0 };

    const toSchedule: LaneToSchedule[] = [];
    for (let i = 1; i < reply.length; i += 2) {
      const lane = String(reply[i]);
      const index = lanes.indexOf(lane);
      if (index >= 0) {
        toSchedule.push({ route: update.deliveries[index].route, lane, gen: Number(reply[i + 1]) });
      }
    }
    if (toSchedule.length) {
      try {
        await this.scheduler.schedule(toSchedule);
      } catch (error) {
        // The update is accepted (see the crash analysis): the reconciler adds the job.
        this.onScheduleError(error);
      }
    }
    return { status: 'queued', deliveries: update.deliveries.length };
  }
}
