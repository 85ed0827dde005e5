import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { OUTBOX_ROUTE } from '@relaygram/contracts';
import { DeadLetterStore, LaneReconciler, type ReconcileReport } from '@relaygram/queue';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';

/**
 * What the housekeeping does, whoever asks for it: the maintenance queue's jobs (see
 * MaintenanceProcessor), a replica's own round and its start (see MaintenanceScheduler),
 * a reload.
 */
@Injectable()
export class LaneMaintenance {
  #stopped = false;

  constructor(
    private readonly config: ConfigService,
    private readonly reconciler: LaneReconciler,
    private readonly dead: DeadLetterStore,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
    @Inject(DISPATCHER_OPTIONS)
    private readonly settings: Pick<ResolvedDispatcherOptions, 'routeRemovedAfterMs'>,
  ) {}

  /** The routes of the current config, by name, and the outbox's. */
  routes(): string[] {
    return [...this.config.config.routes.map((route) => route.name), OUTBOX_ROUTE];
  }

  /** Reconcile now, in the background (at start, after a reload). */
  reconcileSoon(): void {
    if (this.#stopped) return;
    this.reconcile().catch((error: unknown) =>
      this.logger.warn({ err: error }, 'lane reconciliation failed; the next run retries'),
    );
  }

  async reconcile(): Promise<ReconcileReport> {
    const report = await this.reconciler.reconcile(this.routes(), {
      removedAfterMs: this.settings.routeRemovedAfterMs,
    });
    if (report.restarted || report.routeRemoved) {
      this.logger.warn(
        { restarted: report.restarted, route_removed: report.routeRemoved, lanes: report.lanes },
        'lanes reconciled',
      );
    }
    return report;
  }

  /** Tells the reconciler this replica still serves these routes. */
  reportConfigured(routes: readonly string[]): Promise<void> {
    return this.reconciler.reportConfigured(routes);
  }

  async prune(): Promise<void> {
    await this.dead.prune(
      this.routes(),
      this.config.config.bots.map((bot) => bot.id),
    );
  }

  /** No background reconcile from now on (shutdown). */
  stop(): void {
    this.#stopped = true;
  }
}
