import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService, type RelaygramConfig } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
import { BroadcastRunner } from './broadcast/broadcast-runner';
import { DeliveryAttempts } from './delivery/delivery-attempts';
import { DispatcherInbox } from './lanes/dispatcher-inbox';
import { MaintenanceScheduler } from './maintenance/maintenance-scheduler';
import { drainedRoutes } from './outbox/outbox-route';
import { OutboxSender } from './outbox/outbox-sender';
import { RouteRuntimes } from './routes/route-runtimes';
import { DeliveryWorkers } from './workers/delivery-workers';

/**
 * Starts the dispatcher once the app is up, follows config reloads, and stops it in
 * order on shutdown.
 */
@Injectable()
export class DispatcherLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  #unsubscribe?: () => void;
  #reloads: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: ConfigService,
    private readonly routes: RouteRuntimes,
    private readonly workers: DeliveryWorkers,
    private readonly inbox: DispatcherInbox,
    private readonly attempts: DeliveryAttempts,
    private readonly outbox: OutboxSender,
    private readonly broadcasts: BroadcastRunner,
    private readonly maintenance: MaintenanceScheduler,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const { routes } = this.config.config;
    const drained = drainedRoutes(this.config.config);
    this.routes.apply(drained);
    for (const route of drained) {
      this.workers.ensure(route.name, route.concurrency, route.ordering === 'strict');
    }
    this.inbox.start();
    void this.inbox.announce();
    this.maintenance.start();
    this.broadcasts.start();
    this.#unsubscribe = this.config.onReload((next) => {
      this.#reloads = this.#reloads.then(() => this.#apply(next));
      return this.#reloads;
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
    // Broadcasts stop claiming at once and wind down beside the workers (BroadcastRunner).
    const broadcasts = this.broadcasts.stop();
    await this.inbox.leave();
    this.maintenance.stop();
    await this.workers.close();
    await Promise.all([this.attempts.close(), this.outbox.close(), this.inbox.close(), broadcasts]);
  }

  async #apply(next: RelaygramConfig): Promise<void> {
    const drained = drainedRoutes(next);
    const changes = this.routes.apply(drained);
    for (const route of drained) {
      this.workers.ensure(route.name, route.concurrency, route.ordering === 'strict');
    }
    const removals = changes.removed.map((name) => this.workers.remove(name));
    await this.inbox.announce();
    await Promise.all([
      this.attempts.reload(next),
      this.outbox.reload(next),
      this.broadcasts.reload(next),
    ]);
    if (changes.added.length || changes.changed.length || changes.removed.length) {
      this.logger.info(changes, 'dispatcher routes reloaded');
    }
    // Removed routes' workers finish their attempts in the background and hand their
    // lanes on: another replica that still serves the route takes them, or the
    // reconciler moves them to dead letters once no replica has served it for a while.
    void Promise.all(removals)
      .then(() => this.attempts.retain(this.routes.origins()))
      .then(() => this.maintenance.reconcileSoon());
  }
}
