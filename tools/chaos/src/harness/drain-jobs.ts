import { Queue } from 'bullmq';
import { deliveryQueueName, type RedisKeys } from '@relaygram/contracts';
import type { RelaygramRedis } from '@relaygram/queue';

/** A drain job that holds a lane (`l<lane>` in its route's `drains` hash). */
export interface LaneHolder {
  route: string;
  jobId: string;
  lane: string;
  /** PID of the dispatcher whose worker runs the job (BullMQ's `processedBy`). */
  pid: number | undefined;
  /** The job's BullMQ lock token now; undefined when the lock is gone. */
  token: string | undefined;
}

/** What a round of deleting drain jobs by hand took away. */
export interface Deleted {
  waiting: number;
  delayed: number;
  active: number;
}

/**
 * The drain jobs of the install as an operator sees them in Redis and BullMQ: who holds
 * which lane, which jobs failed for good, which armed jobs were never added, and the
 * deletions by hand of `drain-jobs-deleted`. Read-only but for those deletions.
 */
export class DrainJobs {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly redis: RelaygramRedis,
    private readonly keys: RedisKeys,
  ) {}

  /** BullMQ's key of a drain job, or of one of the queue's lists and sets (`active`, `failed`). */
  jobKey(route: string, id: string): string {
    return `${this.keys.bullPrefix}:${deliveryQueueName(route)}:${id}`;
  }

  /** A route's drain-job entries of one kind (`l` holding a lane, `a` armed), by job id. */
  private async entries(route: string, kind: 'l' | 'a'): Promise<[string, string][]> {
    const entries = await this.redis.hgetall(this.keys.drainJobs(route));
    return Object.entries(entries).filter(([, entry]) => entry.startsWith(kind));
  }

  /** Every drain job holding a lane, with the dispatcher that runs it and its lock token. */
  async holders(routes: Iterable<string>): Promise<LaneHolder[]> {
    const found: LaneHolder[] = [];
    for (const route of routes) {
      const held = await this.entries(route, 'l');
      if (!held.length) continue;
      const pipeline = this.redis.pipeline();
      for (const [id] of held) {
        pipeline.hget(this.jobKey(route, id), 'pb');
        pipeline.get(`${this.jobKey(route, id)}:lock`);
      }
      const replies = (await pipeline.exec()) ?? [];
      held.forEach(([jobId, entry], i) => {
        const worker = replies[i * 2]?.[1];
        const token = replies[i * 2 + 1]?.[1];
        found.push({
          route,
          jobId,
          lane: entry.slice(1),
          pid: typeof worker === 'string' ? workerPid(worker) : undefined,
          token: typeof token === 'string' ? token : undefined,
        });
      });
    }
    return found;
  }

  /** Each job's lock token now (undefined: no lock), and whether the job still exists. */
  async locks(
    jobs: readonly { route: string; jobId: string }[],
  ): Promise<{ token: string | undefined; exists: boolean }[]> {
    if (!jobs.length) return [];
    const pipeline = this.redis.pipeline();
    for (const { route, jobId } of jobs) {
      pipeline.get(`${this.jobKey(route, jobId)}:lock`);
      pipeline.exists(this.jobKey(route, jobId));
    }
    const replies = (await pipeline.exec()) ?? [];
    return jobs.map((_, i) => {
      const token = replies[i * 2]?.[1];
      return {
        token: typeof token === 'string' ? token : undefined,
        exists: Number(replies[i * 2 + 1]?.[1]) === 1,
      };
    });
  }

  /** BullMQ jobs in the active lists whose worker is the process `pid`. */
  async activeOf(routes: Iterable<string>, pid: number): Promise<number> {
    let count = 0;
    for (const route of routes) {
      const ids = await this.redis.lrange(this.jobKey(route, 'active'), 0, -1);
      if (!ids.length) continue;
      const workers =
        (await this.redis
          .pipeline(ids.map((id) => ['hget', this.jobKey(route, id), 'pb']))
          .exec()) ?? [];
      for (const [, worker] of workers) {
        if (typeof worker === 'string' && workerPid(worker) === pid) count++;
      }
    }
    return count;
  }

  /** Drain jobs in BullMQ's failed sets: failed for good (kept a day). */
  async failed(routes: Iterable<string>): Promise<number> {
    let count = 0;
    for (const route of routes) count += await this.redis.zcard(this.jobKey(route, 'failed'));
    return count;
  }

  /** Armed jobs (`a<ms>` entries) with no BullMQ job: their add never happened. */
  async phantomArmed(routes: Iterable<string>): Promise<string[]> {
    const phantoms: string[] = [];
    for (const route of routes) {
      const armed = await this.entries(route, 'a');
      if (!armed.length) continue;
      const exists =
        (await this.redis
          .pipeline(armed.map(([id]) => ['exists', this.jobKey(route, id)]))
          .exec()) ?? [];
      armed.forEach(([id], i) => {
        if (Number(exists[i]?.[1]) === 0) phantoms.push(`${route}|${id}`);
      });
    }
    return phantoms;
  }

  /**
   * Deletes up to `max` waiting and up to `max` delayed drain jobs of each route through
   * BullMQ's Queue API (`remove`), as an operator cleaning a queue would. A job that a
   * worker took between the listing and the removal is locked: BullMQ leaves it alone.
   */
  async deleteQueued(routes: readonly string[], max: number): Promise<Omit<Deleted, 'active'>> {
    const listing = this.redis.pipeline();
    for (const route of routes) {
      listing.lrange(this.jobKey(route, 'wait'), 0, max - 1);
      listing.zrange(this.jobKey(route, 'delayed'), 0, max - 1);
    }
    const lists = (await listing.exec()) ?? [];
    const removed = { waiting: 0, delayed: 0 };
    for (let i = 0; i < routes.length; i++) {
      const queue = this.queue(routes[i] as string);
      for (const [state, reply] of [
        ['waiting', lists[i * 2]?.[1]],
        ['delayed', lists[i * 2 + 1]?.[1]],
      ] as const) {
        for (const id of (reply ?? []) as string[]) {
          if ((await queue.remove(id).catch(() => 0)) === 1) removed[state]++;
        }
      }
    }
    return removed;
  }

  /**
   * Deletes up to `max` active drain jobs of the route the way an operator with
   * redis-cli would: out of the active list, and the job hash and its lock deleted. The
   * worker running one finds out at its next lock renewal or lane script.
   */
  async deleteActive(route: string, max: number): Promise<string[]> {
    const active = await this.redis.lrange(this.jobKey(route, 'active'), 0, -1);
    const victims = active.sort(() => Math.random() - 0.5).slice(0, max);
    for (const id of victims) {
      await this.redis
        .multi()
        .lrem(this.jobKey(route, 'active'), 0, id)
        .del(this.jobKey(route, id), `${this.jobKey(route, id)}:lock`)
        .exec();
    }
    return victims;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }

  private queue(route: string): Queue {
    let queue = this.queues.get(route);
    if (!queue) {
      queue = new Queue(deliveryQueueName(route), {
        connection: this.redis,
        prefix: this.keys.bullPrefix,
        skipVersionCheck: true,
      });
      queue.on('error', () => undefined);
      this.queues.set(route, queue);
    }
    return queue;
  }
}

/** The PID in a dispatcher's BullMQ worker name, `dispatcher@<host>:<pid>`. */
export function workerPid(worker: string): number | undefined {
  const pid = Number(worker.slice(worker.lastIndexOf(':') + 1));
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
