import { UnrecoverableError, type Job } from 'bullmq';
import { JOB_QUEUES, JobName, type JobPayloads, type QueueName } from '@relaygram/contracts';

export type JobHandler<N extends JobName> = (
  job: Job<JobPayloads[N], unknown, N>,
  token: string | undefined,
) => Promise<unknown>;

/**
 * One BullMQ processor for a queue, dispatching by job name. It refuses to be built
 * unless every job name of the queue (JOB_QUEUES) has exactly one handler and no
 * handler is for another queue's job, so a worker never starts that would fail jobs
 * it was meant to run. A job of an unknown name fails for good (UnrecoverableError):
 * retrying it cannot help.
 */
export function processorFor(
  queue: QueueName,
  handlers: Partial<Record<JobName, JobHandler<JobName>>>,
): (job: Job, token?: string) => Promise<unknown> {
  const expected = (Object.keys(JOB_QUEUES) as JobName[]).filter(
    (name) => JOB_QUEUES[name] === queue,
  );
  const missing = expected.filter((name) => !handlers[name]);
  const foreign = (Object.keys(handlers) as JobName[]).filter((name) => JOB_QUEUES[name] !== queue);
  if (missing.length || foreign.length) {
    const problems = [
      ...missing.map((name) => `no processor for job ${name}`),
      ...foreign.map((name) => `job ${name} does not run on queue ${queue}`),
    ];
    throw new Error(`queue ${queue}: ${problems.join('; ')}`);
  }
  return (job, token) => {
    const handler = handlers[job.name as JobName];
    if (!handler) {
      return Promise.reject(
        new UnrecoverableError(`queue ${queue} has no processor for job ${job.name}`),
      );
    }
    return handler(job as Job<JobPayloads[JobName], unknown, JobName>, token);
  };
}
