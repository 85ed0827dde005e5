import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService, type RelaygramConfig } from '@relaygram/config';
import { HealthRegistry, RELAYGRAM_LOGGER } from '@relaygram/observability';
import { DrainScheduler } from '@relaygram/queue';
import type { Logger } from 'pino';
import { TargetClient } from './delivery/target-client';
import { WebhookReplyExecutor } from './delivery/webhook-reply.executor';
import { DISPATCHER_OPTIONS, type ResolvedDispatcherOptions } from './dispatcher-options';
import { DispatcherInbox } from './lanes/dispatcher-inbox';
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
    private readonly inbox: DispatcherInbox,
    private readonly scheduler: DrainScheduler,
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
    this.inbox.start();
    void this.#announce();
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
   * SIGTERM: lanes stop being handed to this process; workers take no new jobs; waiting
   * jobs end (handing back a lane that reached them meanwhile), and jobs holding a lane
   * hand it on after their current attempt, to another replica's waiting job or the
   * ready list. Attempts still in flight after the grace period are cut, and their
   * lanes handed on too. Then connections close.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.#unsubscribe?.();
    await this.inbox.leave();
    this.drainer.stop();
    const grace = setTimeout(() => this.target.abortAll(), this.options.shutdownGraceMs);
    grace.unref();
    try {
      this.maintenance.stop();
      await this.workers.close();
    } finally {
      clearTimeout(grace);
    }
    await Promise.all([this.target.close(), this.replies.close(), this.inbox.close()]);
  }

  /** This replica's slots, announced at once, and jobs armed for what already waits. */
  async #announce(): Promise<void> {
    try {
      await this.scheduler.add(await this.inbox.announce());
    } catch (error) {
      // The heartbeat and the reconciler do the same a little later.
      this.logger.warn({ err: error }, 'could not announce this dispatcher yet');
    }
  }

  async #apply(next: RelaygramConfig): Promise<void> {
    const changes = this.routes.apply(next.routes);
    for (const route of next.routes) {
      this.workers.ensure(route.name, route.concurrency, route.ordering === 'strict');
    }
    const removals = changes.removed.map((name) => this.workers.remove(name));
    await this.#announce();
    await this.replies.replace(next);
    if (changes.added.length || changes.changed.length || changes.removed.length) {
      this.logger.info(changes, 'dispatcher routes reloaded');
    }
    // Removed routes' workers finish their attempts in the background and hand their
    // lanes on: another replica that still serves the route takes them, or the
    // reconciler moves them to dead letters once no replica has served it for a while.
    void Promise.all(removals)
      .then(() => this.target.retain(this.routes.origins()))
      .then(() => this.maintenance.reconcileSoon());
  }
}
