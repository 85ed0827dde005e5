import { Queue } from 'bullmq';
import { deliveryQueueName, laneId } from '@relaygram/contracts';
import {
  DrainScheduler,
  UpdateEnqueuer,
  newDeliveryId,
  pullLaneId,
  queueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import { laneKeyFor, type Update } from '@relaygram/routing';
import { updateJson, type UpdateStream } from './update-factory';

/** Enqueue calls kept in flight while filling: enough to keep Redis busy, not to flood it. */
const IN_FLIGHT = 256;

async function inBatches(count: number, each: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += IN_FLIGHT) {
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(count, start + IN_FLIGHT); i++) batch.push(each(i));
    await Promise.all(batch);
  }
}

/** The route's delivery queue, paused so that nothing drains until `resume`. */
export async function pausedDeliveryQueue(
  client: RelaygramRedis,
  prefix: string,
  route: string,
): Promise<Queue> {
  const queue = new Queue(deliveryQueueName(route), {
    connection: client,
    prefix: `${prefix}:bull`,
    skipVersionCheck: true,
  });
  queue.on('error', () => undefined);
  await queue.pause();
  return queue;
}

/**
 * `count` updates enqueued for one route exactly as ingress does it (UpdateEnqueuer,
 * lanes from the routing lib), drain jobs included; for a pull route (`pull`), its one
 * pull lane, where getUpdates takes them. Returns the update bytes written.
 */
export async function prefillLanes(
  client: RelaygramRedis,
  prefix: string,
  options: {
    bot: string;
    route: string;
    ordering: 'chat' | 'strict' | 'none';
    stream: UpdateStream;
    count: number;
    pull?: boolean;
  },
): Promise<number> {
  const ctx = queueContext(client, prefix);
  const scheduler = new DrainScheduler(ctx);
  const enqueuer = new UpdateEnqueuer(ctx, scheduler, (error) => {
    throw error;
  });
  let bytes = 0;
  try {
    await inBatches(options.count, async (i) => {
      const updateId = options.stream.firstId + i;
      const json = updateJson(options.stream, updateId);
      bytes += Buffer.byteLength(json);
      const update = JSON.parse(json) as Update;
      const deliveryId = newDeliveryId();
      const lane = options.pull
        ? pullLaneId(options.route, options.bot)
        : laneId(options.route, options.bot, laneKeyFor(options.ordering, update, deliveryId));
      const result = await enqueuer.enqueue({
        bot: options.bot,
        updateId,
        body: Buffer.from(json),
        deliveries: [
          { route: options.route, lane, deliveryId, ...(options.pull ? { pull: true } : {}) },
        ],
      });
      if (result.status !== 'queued') throw new Error(`update ${updateId} was ${result.status}`);
    });
  } finally {
    await scheduler.close();
  }
  return bytes;
}

/** `count` BullMQ jobs carrying the update as their data (baseline B2). */
export async function prefillJobs(
  queue: Queue,
  stream: UpdateStream,
  count: number,
): Promise<void> {
  const chunk = 1000;
  for (let start = 0; start < count; start += chunk) {
    const jobs = [];
    for (let i = start; i < Math.min(count, start + chunk); i++) {
      jobs.push({
        name: 'deliver',
        data: { body: updateJson(stream, stream.firstId + i) },
        opts: { removeOnComplete: true, removeOnFail: true },
      });
    }
    await queue.addBulk(jobs);
  }
}
