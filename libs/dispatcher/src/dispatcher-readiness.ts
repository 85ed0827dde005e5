import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Feature } from '@relaygram/contracts';
import { HealthRegistry } from '@relaygram/observability';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { DeliveryWorkers } from './workers/delivery-workers';

/** The dispatcher is ready while every route's worker and the maintenance worker run. */
@Injectable()
export class DispatcherReadiness implements OnApplicationBootstrap {
  constructor(
    private readonly health: HealthRegistry,
    private readonly workers: DeliveryWorkers,
    private readonly maintenanceWorker: MaintenanceProcessor,
  ) {}

  onApplicationBootstrap(): void {
    this.health.addReadinessCheck(Feature.Dispatcher, () => {
      const { running, down } = this.workers.status();
      const maintenance = this.maintenanceWorker.running();
      return {
        ready: down.length === 0 && maintenance,
        detail: { routes: running.length, down, maintenance },
      };
    });
  }
}
