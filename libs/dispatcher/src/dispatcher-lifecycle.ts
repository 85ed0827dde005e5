import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService, type RelaygramConfig } from '@relaygram/config';
import { HealthRegistry, RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
import { TargetClient } from './delivery/target-client';
import { WebhookReplyExecutor } from './delivery/webhook-reply.executor';
import { DISPATCHER_OPTIONS, type ResolvedDispatcherOptions } from './dispatcher-options';
import { LaneDrainer } from './lanes/lane-drainer';
import { MaintenanceScheduler } from './maintenance/maintenance-scheduler';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { RouteRuntimes } from './routes/route-runtimes';
import { DeliveryWorkers } from './workers/delivery-workers';

/**
 * Starts the dispatcher once the app is up, follows config reloads, reports readiness,
 * and stops it in order on shutdown.
 */
@Injectable()
export class DispatcherLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  #unsubscribe?: () => void;
  #reloads: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: ConfigService,
    private readonly routes: RouteRuntimes,
    private readonly workers: DeliveryWorkers,
    private readonly drainer: LaneDrainer,
    private readonly target: TargetClient,
    private readonly replies: WebhookReplyExecutor,
    private readonly maintenance: MaintenanceScheduler,
    private readonly maintenanceWorker: MaintenanceProcessor,
    private readonly health: HealthRegistry,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS) private readonly options: ResolvedDispatcherOptions,
  ) {}

  onApplicationBootstrap(): void {
    const { routes } = this.config.config;
    this.routes.apply(routes);
    for (const route of routes) {
      this.workers.ensure(route.name, route.concurrency, route.ordering === 'strict');
    }
    this.maintenance.start();
    this.#unsubscribe = this.config.onReload((next) => {
      this.#reloads = this.#reloads.then(() => this.#apply(next));
      return this.#reloads;
    });
    this.health.addReadinessCheck('dispatcher', () => {
      const { running, down } = this.workers.status();
      const maintenance = this.maintenanceWorker.running();
      return {
        ready: down.length === 0 && maintenance,
        detail: { routes: running.length, down, maintenance },
      };
    });
    this.logger.info(
      { routes: routes.map((route) => route.name) },
      `dispatcher delivering ${routes.length} route${routes.length === 1 ? '' : 's'}`,
    );
  }

  /**
   * SIGTERM: workers take no new jobs; lanes in progress are handed back after their
   * current attempt (the drainer yields them); attempts still in flight after the grace
   * period are cut, and their lanes handed back too. Then connections close.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.#unsubscribe?.();
    this.drainer.stop();
    const grace = setTimeout(() => this.target.abortAll(), this.options.shutdownGraceMs);
    grace.unref();
    try {
      this.maintenance.stop();
      await this.workers.close();
    } finally {
      clearTimeout(grace);
    }
    await Promise.all([this.target.close(), this.replies.close()]);
  }

  async #apply(next: RelaygramConfig): Promise<void> {
    const changes = this.routes.apply(next.routes);
    for (const route of next.routes) {
      this.workers.ensure(route.name, route.concurrency, route.ordering === 'strict');
    }
    const removals = changes.removed.map((name) => this.workers.remove(name));
    await this.replies.replace(next);
    if (changes.added.length || changes.changed.length || changes.removed.length) {
      this.logger.info(changes, 'dispatcher routes reloaded');
    }
    // Removed routes' workers finish their attempts in the background; their lanes are
    // held (no job) until the reconciler restarts or kills them.
    void Promise.all(removals)
      .then(() => this.target.retain(this.routes.origins()))
      .then(() => this.maintenance.reconcileSoon());
  }
}
