import { Inject } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { JobName, QueueName } from '@relaygram/contracts';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
import { DISPATCHER_OPTIONS, type ResolvedDispatcherOptions } from '../dispatcher-options';
import type { WorkerActivity } from '../health/worker-stall';
import { processorFor } from '../workers/job-processors';
import { LaneMaintenance } from './lane-maintenance';

/**
 * Runs the housekeeping jobs of the maintenance queue, one at a time per replica. The
 * queue and its worker are static, so they are declared the @nestjs/bullmq way; the
 * delivery queues are one per route and change with config reloads, so DeliveryWorkers
 * manages those workers itself.
 */
@Processor(QueueName.Maintenance, { concurrency: 1 })
export class MaintenanceProcessor extends WorkerHost {
  readonly #dispatch: (job: Job, token?: string) => Promise<unknown>;
  #started = 0;
  #active = 0;

  constructor(
    maintenance: LaneMaintenance,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS)
    private readonly options: Pick<ResolvedDispatcherOptions, 'stallWorkerAfter'>,
  ) {
    super();
    this.#dispatch = processorFor(QueueName.Maintenance, {
      [JobName.ReconcileLanes]: () => maintenance.reconcile(),
      [JobName.PruneDeadLetters]: () => maintenance.prune(),
    });
  }

  async process(job: Job, token?: string): Promise<unknown> {
    this.#started++;
    this.#active++;
    if (this.#started === this.options.stallWorkerAfter) void this.worker.pause(true);
    try {
      return await this.#dispatch(job, token);
    } finally {
      this.#active--;
    }
  }

  /** What the stall watch reads of this worker; undefined before it exists. */
  activity(): WorkerActivity | undefined {
    let worker: typeof this.worker;
    try {
      worker = this.worker;
    } catch {
      return undefined;
    }
    return {
      name: 'maintenance',
      queue: worker.name,
      waitKey: worker.keys.wait as string,
      delayedKey: worker.keys.delayed as string,
      started: this.#started,
      freeSlot: this.#active < 1,
    };
  }

  /** True while the worker takes jobs. */
  running(): boolean {
    try {
      return this.worker.isRunning();
    } catch {
      return false;
    }
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error({ job: job?.name, err: error }, 'maintenance job failed');
  }

  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logger.error({ err: error }, 'maintenance worker error');
  }
}
