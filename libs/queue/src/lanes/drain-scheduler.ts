import { Queue } from 'bullmq';
import {
  DRAIN_JOB_OPTIONS,
  JobName,
  deliveryQueueName,
  drainJobId,
  type DrainLaneJob,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';

export interface LaneToSchedule {
  route: string;
  lane: string;
  gen: number;
  /** Don't run the job before this time (ms): a lane whose head is backing off. */
  notBefore?: number;
}

function jobOptions({ lane, gen, notBefore }: LaneToSchedule) {
  const delay = notBefore === undefined ? 0 : Math.max(0, notBefore - Date.now());
  return { ...DRAIN_JOB_OPTIONS, jobId: drainJobId(lane, gen), ...(delay ? { delay } : {}) };
}

/**
 * Gives lanes their drain jobs, one BullMQ queue per route. The job id carries the
 * lane's generation, so a lane never has two live jobs for one generation, and the
 * add is idempotent when the reconciler and ingress race for the same generation.
 */
export class DrainScheduler {
  private readonly queues = new Map<string, Queue<DrainLaneJob>>();

  constructor(private readonly ctx: QueueContext) {}

  queue(route: string): Queue<DrainLaneJob> {
    let queue = this.queues.get(route);
    if (!queue) {
      queue = new Queue<DrainLaneJob>(deliveryQueueName(route), {
        connection: this.ctx.redis,
        prefix: this.ctx.keys.bullPrefix,
        skipVersionCheck: true,
      });
      // Errors surface on the add() promises; this keeps an idle queue's connection
      // hiccup from becoming an unhandled 'error' event.
      queue.on('error', () => undefined);
      this.queues.set(route, queue);
    }
    return queue;
  }

  async schedule(lanes: readonly LaneToSchedule[]): Promise<void> {
    if (lanes.length === 1) {
      const { route, lane, gen } = lanes[0];
      await this.queue(route).add(JobName.DrainLane, { lane, gen }, jobOptions(lanes[0]));
      return;
    }
    const byRoute = new Map<string, LaneToSchedule[]>();
    for (const item of lanes) {
      const list = byRoute.get(item.route) ?? [];
      list.push(item);
      byRoute.set(item.route, list);
    }
    await Promise.all(
      [...byRoute].map(([route, items]) =>
        this.queue(route).addBulk(
          items.map((item) => ({
            name: JobName.DrainLane,
            data: { lane: item.lane, gen: item.gen },
            opts: jobOptions(item),
          })),
        ),
      ),
    );
  }

  /** Redis key of a drain job (BullMQ's layout), for the reconciler's existence checks. */
  jobKey(route: string, lane: string, gen: number): string {
    return this.queue(route).toKey(drainJobId(lane, gen));
  }

  async close(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.all(queues.map((q) => q.close()));
  }
}
