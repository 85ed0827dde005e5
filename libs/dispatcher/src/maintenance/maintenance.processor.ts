import { Inject } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { JobName, QueueName } from '@relaygram/contracts';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
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

  constructor(
    maintenance: LaneMaintenance,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {
    super();
    this.#dispatch = processorFor(QueueName.Maintenance, {
      [JobName.ReconcileLanes]: () => maintenance.reconcile(),
      [JobName.PruneDeadLetters]: () => maintenance.prune(),
    });
  }

  process(job: Job, token?: string): Promise<unknown> {
    return this.#dispatch(job, token);
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
