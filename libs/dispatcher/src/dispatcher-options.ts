import {
  DRAIN_LIFETIME_MS,
  DRAIN_LINGER_MS,
  DRAIN_LOCK_DURATION_MS,
  DRAIN_MAX_STALLED_COUNT,
  RECONCILE_EVERY_MS,
} from '@relaygram/contracts';
import type { FaultInjection } from '@relaygram/config';
import { ROUTE_REMOVED_AFTER_MS } from '@relaygram/queue';

/** Tuning of the dispatcher; every field has a production default. */
export interface DispatcherModuleOptions {
  /**
   * On shutdown, attempts in flight get this long to finish; then they are cut and
   * their lanes handed back. Well under the 25 s the bootstrap allows in all.
   */
  shutdownGraceMs?: number;
  /** A drain job hands its lane on (when another lane waits) after this many deliveries... */
  batchSize?: number;
  /** ...or after this long, so one busy lane cannot keep others from a worker slot. */
  batchTimeMs?: number;
  /** How long a drain job with nothing ready waits for a lane handed to it before it ends. */
  lingerMs?: number;
  /** A drain job ends after this long, handing its lane on, so locks and memory stay fresh. */
  lifetimeMs?: number;
  /** BullMQ lock of a drain job (renewed while it runs); a dead replica's jobs wait this long. */
  lockDurationMs?: number;
  /** Stalls of a drain job before BullMQ fails it for good (the reconciler then repairs). */
  maxStalledCount?: number;
  /** How often lanes are reconciled (BullMQ job scheduler) and routes reported. */
  reconcileEveryMs?: number;
  /** How long a route must go unserved before its lanes die as `route_removed`. */
  routeRemovedAfterMs?: number;
  /** BullMQ's check for jobs of dead workers. */
  stalledIntervalMs?: number;
  /**
   * A worker (a route's, or the maintenance one) counts as stuck once a job waited this
   * long, first in its queue (or first of its delayed jobs, due), while the worker had a
   * free slot and started nothing (see WorkerStallWatch); `/health/live` then fails so
   * the orchestrator restarts the process.
   */
  stallAfterMs?: number;
  /** How often each worker and its queue are looked at for a stall. */
  stallCheckEveryMs?: number;
  /**
   * Chaos suite and tests only (RELAYGRAM_FAULTS stall_worker_after): each worker stops
   * taking jobs, while it still says it runs, after starting this many (0: never).
   */
  stallWorkerAfter?: number;
  /**
   * Chaos suite only (RELAYGRAM_FAULTS): the process kills itself with this probability
   * right after a drain job claimed another lane's head, before sending it...
   */
  dieAfterClaim?: number;
  /** ...or right after a drain job handed its lane on. */
  dieAfterYield?: number;
}

export type ResolvedDispatcherOptions = Required<DispatcherModuleOptions>;

export const DISPATCHER_DEFAULTS: ResolvedDispatcherOptions = Object.freeze({
  shutdownGraceMs: 10_000,
  batchSize: 100,
  batchTimeMs: 1_000,
  lingerMs: DRAIN_LINGER_MS,
  lifetimeMs: DRAIN_LIFETIME_MS,
  lockDurationMs: DRAIN_LOCK_DURATION_MS,
  maxStalledCount: DRAIN_MAX_STALLED_COUNT,
  reconcileEveryMs: RECONCILE_EVERY_MS,
  routeRemovedAfterMs: ROUTE_REMOVED_AFTER_MS,
  stalledIntervalMs: 15_000,
  stallAfterMs: 60_000,
  stallCheckEveryMs: 10_000,
  stallWorkerAfter: 0,
  dieAfterClaim: 0,
  dieAfterYield: 0,
});

export const DISPATCHER_OPTIONS = Symbol('RELAYGRAM_DISPATCHER_OPTIONS');
/** The process logger with `component: dispatcher` on every line. */
export const DISPATCHER_LOGGER = Symbol('RELAYGRAM_DISPATCHER_LOGGER');

/** The options, over the defaults, over what RELAYGRAM_FAULTS asks of the chaos suite. */
export function resolveDispatcherOptions(
  options: DispatcherModuleOptions | undefined,
  faults: FaultInjection = {},
): ResolvedDispatcherOptions {
  return {
    ...DISPATCHER_DEFAULTS,
    ...stripUndefined({
      lockDurationMs: faults.drainLockMs,
      maxStalledCount: faults.maxStalledCount,
      dieAfterClaim: faults.dieAfterClaim,
      dieAfterYield: faults.dieAfterYield,
      stallWorkerAfter: faults.stallWorkerAfter,
      stallAfterMs: faults.stallAfterMs,
      // A shortened watch looks often enough to catch a stall within its period.
      stallCheckEveryMs:
        faults.stallAfterMs === undefined
          ? undefined
          : Math.min(DISPATCHER_DEFAULTS.stallCheckEveryMs, Math.ceil(faults.stallAfterMs / 4)),
    }),
    ...stripUndefined(options ?? {}),
  };
}

function stripUndefined(options: DispatcherModuleOptions): DispatcherModuleOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
