import type { Job } from 'bullmq';
import {
  JOB_QUEUES,
  JobName,
  QueueName,
  type DrainLaneJob,
  type JobNameOn,
  type JobOf,
} from './queue-names';

/** A processor of the delivery queue, written against the contract alone. */
function laneOf(job: JobOf<JobNameOn<QueueName.Delivery>>): string | undefined {
  return job.name === JobName.DrainLane ? job.data.lane : undefined;
}

describe('job contracts', () => {
  it('gives a processor typed data, narrowed by the job name', () => {
    const legacy: DrainLaneJob = { lane: 'site:sol-prod:chat:42', gen: 3 };
    expect(laneOf({ name: JobName.DrainLane, data: legacy })).toBe(legacy.lane);
    expect(laneOf({ name: JobName.Drain, data: {} })).toBeUndefined();
  });

  it('takes a BullMQ job of the same name and data without a cast', () => {
    const job = { name: JobName.DrainLane, data: { lane: 'l', gen: 1 } } as Job<
      DrainLaneJob,
      unknown,
      JobName.DrainLane
    >;
    expect(laneOf(job)).toBe('l');
  });

  it('lists the job names of each queue', () => {
    const delivery: JobNameOn<QueueName.Delivery>[] = [JobName.Drain, JobName.DrainLane];
    const maintenance: JobNameOn<QueueName.Maintenance>[] = [
      JobName.ReconcileLanes,
      JobName.PruneDeadLetters,
    ];
    for (const name of delivery) expect(JOB_QUEUES[name]).toBe(QueueName.Delivery);
    for (const name of maintenance) expect(JOB_QUEUES[name]).toBe(QueueName.Maintenance);
  });
});
