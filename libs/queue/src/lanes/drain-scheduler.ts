import { Queue } from 'bullmq';
import {
  DRAIN_JOB_OPTIONS,
  JobName,
  deliveryQueueName,
  type DrainJob,
  type JobOf,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import type { DrainJobsToAdd } from './drain-script-io';

/**
 * Adds the drain jobs the lane scripts arm, one BullMQ queue per route (each route has
 * its own worker slots). Job ids come from the scripts and never repeat, so an add
 * that races the reconciler's repair of the same job is harmless, and a job id in a
 * route's `drains` hash names exactly one BullMQ job.
 */
export class DrainScheduler {
  private readonly queues = new Map<string, Queue<DrainJob>>();

  constructor(private readonly ctx: QueueContext) {}

  queue(route: string): Queue<DrainJob> {
    let queue = this.queues.get(route);
    if (!queue) {
      queue = new Queue<DrainJob>(deliveryQueueName(route), {
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

  /** Adds the armed jobs at once and the wake jobs delayed until their time. */
  async add({ arms, wakes }: DrainJobsToAdd, now = Date.now()): Promise<void> {
    if (!arms.length && !wakes.length) return;
    const byRoute = new Map<string, (JobOf<JobName.Drain> & { opts: object })[]>();
    const push = (route: string, jobId: string, delay: number) => {
      const list = byRoute.get(route) ?? [];
      list.push({
        name: JobName.Drain,
        data: {},
        opts: { ...DRAIN_JOB_OPTIONS, jobId, ...(delay > 0 ? { delay } : {}) },
      });
      byRoute.set(route, list);
    };
    for (const { route, jobId } of arms) push(route, jobId, 0);
    for (const { route, jobId, at } of wakes) push(route, jobId, Math.ceil(at - now));
    await Promise.all(
      [...byRoute].map(([route, jobs]) =>
        jobs.length === 1
          ? this.queue(route).add(jobs[0].name, jobs[0].data, jobs[0].opts)
          : this.queue(route).addBulk(jobs),
      ),
    );
  }

  /** Redis key of a drain job (BullMQ's layout), for the reconciler's existence checks. */
  jobKey(route: string, jobId: string): string {
    return this.queue(route).toKey(jobId);
  }

  /** Redis key of a drain job's lock, which holds the token of the run that has it. */
  lockKey(route: string, jobId: string): string {
    return `${this.jobKey(route, jobId)}:lock`;
  }

  async close(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.all(queues.map((q) => q.close()));
  }
}
