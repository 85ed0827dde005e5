import { UnrecoverableError, type Job } from 'bullmq';
import {
  JOB_QUEUES,
  JobName,
  type JobNameOn,
  type JobOf,
  type QueueName,
} from '@relaygram/contracts';

/** A BullMQ job of one name, its data that of the name (JobOf). */
export type QueueJob<N extends JobName> = Job<JobOf<N>['data'], unknown, N>;

export type JobHandler<N extends JobName> = (
  job: QueueJob<N>,
  token: string | undefined,
) => Promise<unknown>;

/** A handler for each job name of queue Q, each taking the jobs of its name. */
export type JobHandlers<Q extends QueueName> = { [N in JobNameOn<Q>]: JobHandler<N> };

/** What BullMQ calls: a job whose name is not checked yet. */
type Processor = (job: Job, token?: string) => Promise<unknown>;

/**
 * One BullMQ processor for a queue, dispatching by job name. It refuses to be built
 * unless every job name of the queue (JOB_QUEUES) has exactly one handler and no
 * handler is for another queue's job, so a worker never starts that would fail jobs
 * it was meant to run (the types say as much; this holds when JOB_QUEUES and JobQueues
 * disagree, or a caller casts). A job of an unknown name fails for good
 * (UnrecoverableError): retrying it cannot help.
 */
export function processorFor<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>): Processor {
  // Looked up by the job's own name: the handler found takes jobs of that name.
  const byName = handlers as Partial<Record<JobName, Processor>>;
  const expected = (Object.keys(JOB_QUEUES) as JobName[]).filter(
    (name) => JOB_QUEUES[name] === queue,
  );
  const missing = expected.filter((name) => !byName[name]);
  const foreign = (Object.keys(byName) as JobName[]).filter((name) => JOB_QUEUES[name] !== queue);
  if (missing.length || foreign.length) {
    const problems = [
      ...missing.map((name) => `no processor for job ${name}`),
      ...foreign.map((name) => `job ${name} does not run on queue ${queue}`),
    ];
    throw new Error(`queue ${queue}: ${problems.join('; ')}`);
  }
  return (job, token) => {
    const handler = byName[job.name as JobName];
    if (!handler) {
      return Promise.reject(
        new UnrecoverableError(`queue ${queue} has no processor for job ${job.name}`),
      );
    }
    return handler(job, token);
  };
}
