import { UnrecoverableError, type Job } from 'bullmq';
import { JobName, QueueName } from '@relaygram/contracts';
import { processorFor, type JobHandler } from './job-processors';

const handler =
  (result: string): JobHandler<JobName> =>
  () =>
    Promise.resolve(result);
const job = (name: string) => ({ name, data: {} }) as unknown as Job;

describe('processorFor', () => {
  it('dispatches each job name of the queue to its handler', async () => {
    const process = processorFor(QueueName.Maintenance, {
      [JobName.ReconcileLanes]: handler('reconciled'),
      [JobName.PruneDeadLetters]: handler('pruned'),
    });
    expect(await process(job(JobName.ReconcileLanes))).toBe('reconciled');
    expect(await process(job(JobName.PruneDeadLetters))).toBe('pruned');
  });

  it('refuses to build a processor that lacks a job name of its queue', () => {
    // The types refuse these too; the check under test is the one at run time.
    expect(() =>
      // @ts-expect-error prune-dead-letters has no handler
      processorFor(QueueName.Maintenance, { [JobName.ReconcileLanes]: handler('x') }),
    ).toThrow('queue maintenance: no processor for job prune-dead-letters');
    // @ts-expect-error no handler at all
    expect(() => processorFor(QueueName.Delivery, {})).toThrow('no processor for job drain');
    // @ts-expect-error drain-lane has no handler
    expect(() => processorFor(QueueName.Delivery, { [JobName.Drain]: handler('x') })).toThrow(
      'no processor for job drain-lane',
    );
  });

  it("refuses a handler for another queue's job", () => {
    expect(() =>
      processorFor(QueueName.Delivery, {
        [JobName.Drain]: handler('x'),
        [JobName.DrainLane]: handler('x'),
        // @ts-expect-error reconcile-lanes runs on the maintenance queue
        [JobName.ReconcileLanes]: handler('y'),
      }),
    ).toThrow('job reconcile-lanes does not run on queue delivery');
  });

  it('fails a job of an unknown name for good', async () => {
    const process = processorFor(QueueName.Delivery, {
      [JobName.Drain]: handler('x'),
      [JobName.DrainLane]: handler('x'),
    });
    await expect(process(job('mystery'))).rejects.toBeInstanceOf(UnrecoverableError);
  });
});
