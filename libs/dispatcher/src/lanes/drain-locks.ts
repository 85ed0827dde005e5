import { Inject, Injectable } from '@nestjs/common';
import type { DrainJobRef, LaneStore } from '@relaygram/queue';
import { DISPATCHER_OPTIONS, type ResolvedDispatcherOptions } from '../dispatcher-options';

/**
 * What this process knows of its drain jobs' BullMQ locks, from the worker's renewal
 * events. A job sends a head only while its lock is surely held: when the last renewal
 * is old (the process was paused, its event loop starved) or a renewal failed, the
 * lock is read from Redis first, and a job whose lock lapsed stops. The lane scripts
 * fence every write with the lock anyway; this keeps a woken zombie from sending.
 */
@Injectable()
export class DrainLocks {
  readonly #held = new Map<string, { until: number; lost: boolean }>();
  private readonly lockDurationMs: number;
  /** Below this much lock left, ask Redis before sending. */
  private readonly marginMs: number;

  constructor(
    @Inject(DISPATCHER_OPTIONS)
    { lockDurationMs }: Pick<ResolvedDispatcherOptions, 'lockDurationMs'>,
  ) {
    this.lockDurationMs = lockDurationMs;
    this.marginMs = Math.min(5_000, lockDurationMs / 3);
  }

  track(job: DrainJobRef, now = Date.now()): void {
    this.#held.set(job.jobId, { until: now + this.lockDurationMs, lost: false });
  }

  untrack(jobId: string): void {
    this.#held.delete(jobId);
  }

  /** BullMQ's `locksRenewed` event. */
  renewed(jobIds: readonly string[], now = Date.now()): void {
    for (const id of jobIds) {
      const held = this.#held.get(id);
      if (held && !held.lost) held.until = now + this.lockDurationMs;
    }
  }

  /** BullMQ's `lockRenewalFailed` event. */
  lost(jobIds: readonly string[]): void {
    for (const id of jobIds) {
      const held = this.#held.get(id);
      if (held) held.lost = true;
    }
  }

  async stillHeld(job: DrainJobRef, lanes: LaneStore, now = Date.now()): Promise<boolean> {
    const held = this.#held.get(job.jobId);
    if (!held || held.lost) return false;
    if (held.until - now > this.marginMs) return true;
    const left = await lanes.lockLeft(job);
    if (left === undefined) {
      held.lost = true;
      return false;
    }
    held.until = Date.now() + left;
    return true;
  }
}
