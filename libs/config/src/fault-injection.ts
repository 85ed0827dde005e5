/**
 * `RELAYGRAM_FAULTS`: fault injection for the chaos suite (tools/chaos), never for
 * production. Comma-separated `name=value` pairs:
 * - `die_after_claim=<p>`: a dispatcher kills itself (SIGKILL) with probability p right
 *   after a drain job claimed another lane's head, before sending it;
 * - `die_after_yield=<p>`: the same right after a drain job handed its lane on (yield);
 * - `die_after_enqueue=<p>`: an ingress kills itself right after the enqueue script,
 *   before adding the drain jobs it armed (and before answering);
 * - `max_stalled_count=<n>`: BullMQ's stalls before a drain job fails for good (0: at
 *   the first), so only the reconciler repairs;
 * - `drain_lock_ms=<ms>`: a drain job's BullMQ lock (default 30 s), so that a process
 *   paused past its lock can be tested in seconds;
 * - `stall_worker_after=<n>`: each worker of a dispatcher (every route's, the maintenance
 *   one) stops taking jobs after starting n, while it still says it runs (the fault the
 *   dispatcher's stall watch catches);
 * - `stall_after_ms=<ms>`: how long the stall watch lets a job wait (default 60 s), so
 *   that a stuck worker is caught in seconds.
 */
export interface FaultInjection {
  readonly dieAfterClaim?: number;
  readonly dieAfterYield?: number;
  readonly dieAfterEnqueue?: number;
  readonly maxStalledCount?: number;
  readonly drainLockMs?: number;
  readonly stallWorkerAfter?: number;
  readonly stallAfterMs?: number;
}

const RATES = {
  die_after_claim: 'dieAfterClaim',
  die_after_yield: 'dieAfterYield',
  die_after_enqueue: 'dieAfterEnqueue',
} as const;
const COUNTS = {
  max_stalled_count: 'maxStalledCount',
  drain_lock_ms: 'drainLockMs',
  stall_worker_after: 'stallWorkerAfter',
  stall_after_ms: 'stallAfterMs',
} as const;

export function parseFaultInjection(raw: string | undefined, problems: string[]): FaultInjection {
  const faults: Record<string, number> = {};
  if (!raw) return Object.freeze(faults);
  for (const part of raw.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    const name = (eq < 0 ? item : item.slice(0, eq)).trim();
    const value = eq < 0 ? Number.NaN : Number(item.slice(eq + 1).trim());
    if (name in RATES) {
      if (!(value >= 0 && value <= 1)) {
        problems.push(`RELAYGRAM_FAULTS: ${name} must be a probability from 0 to 1`);
        continue;
      }
      faults[RATES[name as keyof typeof RATES]] = value;
    } else if (name in COUNTS) {
      if (!Number.isInteger(value) || value < 0) {
        problems.push(`RELAYGRAM_FAULTS: ${name} must be a non-negative integer`);
        continue;
      }
      faults[COUNTS[name as keyof typeof COUNTS]] = value;
    } else {
      problems.push(
        `RELAYGRAM_FAULTS: unknown fault ${JSON.stringify(name.slice(0, 40))} (known: ${[...Object.keys(RATES), ...Object.keys(COUNTS)].join(', ')})`,
      );
    }
  }
  return Object.freeze(faults);
}
