import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService, pullRoutesOf, type RelaygramConfig } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import { PullStore, QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';

/** How often the pull routes are reported, expired and cleaned up. */
export const PULL_MAINTENANCE_EVERY_MS = 10_000;

/**
 * The pull routes' housekeeping, in the gateway because the gateway serves them (the
 * dispatcher never sees a pull route): every replica reports the pull routes it serves
 * each period, and one replica at a time (a lock for the period) moves entries past
 * max_age to dead letters, whether or not a client polls, and the lanes of a pull route
 * no replica has reported for 5 minutes to dead letters as route_removed (so a replica
 * on an older config during a rolling update never kills a route the new one added).
 */
@Injectable()
export class PullMaintenance implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly #id = randomUUID();
  #timer?: NodeJS.Timeout;
  #running?: Promise<void>;
  #unsubscribe?: () => void;

  constructor(
    private readonly config: ConfigService,
    private readonly store: PullStore,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.#report(this.config.config);
    this.#unsubscribe = this.config.onReload((next) => this.#report(next));
    this.#timer = setInterval(() => {
      this.#running ??= this.runOnce().finally(() => (this.#running = undefined));
    }, PULL_MAINTENANCE_EVERY_MS);
    this.#timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One period: report, and sweep when this replica holds the period's lock. */
  async runOnce(now = Date.now()): Promise<void> {
    const routes = pullRoutesOf(this.config.config);
    try {
      const { redis, keys } = this.ctx;
      const locked = await redis.set(
        keys.pullMaintenanceLock,
        this.#id,
        'PX',
        PULL_MAINTENANCE_EVERY_MS - 500,
        'NX',
      );
      if (locked !== 'OK') {
        await this.store.reportConfigured(
          routes.map((r) => r.name),
          now,
        );
        return;
      }
      const report = await this.store.sweep(
        routes.map((r) => ({ name: r.name, bots: r.bots, maxAgeMs: r.maxAgeMs })),
        { now },
      );
      if (report.expired || report.routeRemoved) this.logger.info(report, 'pull lanes swept');
    } catch (error) {
      this.logger.warn({ err: error }, 'pull route maintenance failed; it runs again next period');
    }
  }

  async #report(config: RelaygramConfig): Promise<void> {
    await this.store
      .reportConfigured(pullRoutesOf(config).map((r) => r.name))
      .catch(() => undefined);
  }
}
