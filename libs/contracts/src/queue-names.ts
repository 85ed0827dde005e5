/**
 * BullMQ queue names. They are stored in Redis key names: renaming one strands the
 * jobs already queued under the old name, so a rename needs a migration.
 */
export enum QueueName {
  /** One queue per route (`delivery.<route>`), so each route has its own worker slots. */
  Delivery = 'delivery',
  /** Scheduled housekeeping: lane reconciliation, dead-letter pruning. */
  Maintenance = 'maintenance',
}

/** The delivery queue of one route. Route names are `[a-z0-9-]`, so `.` cannot clash. */
export function deliveryQueueName(route: string): string {
  return `${QueueName.Delivery}.${route}`;
}

/** The route a delivery queue name belongs to, or undefined for other queues. */
export function routeOfQueue(queueName: string): string | undefined {
  const prefix = `${QueueName.Delivery}.`;
  return queueName.startsWith(prefix) ? queueName.slice(prefix.length) : undefined;
}

export enum JobName {
  /** Deliver the head of one lane, then the next, until it is empty or yields. */
  DrainLane = 'drain-lane',
  /** Give a drain job to every non-empty lane that has none. */
  ReconcileLanes = 'reconcile-lanes',
  /** Drop dead letters older than their retention from the indexes. */
  PruneDeadLetters = 'prune-dead-letters',
}

export interface DrainLaneJob {
  /** Lane id, see `laneId()`. */
  lane: string;
  /**
   * The lane's schedule generation when this job was made. A job whose generation is
   * no longer the lane's current one is stale (the reconciler replaced it) and exits.
   */
  gen: number;
}

/** Job data by job name; producers and processors both type against this. */
export interface JobPayloads {
  [JobName.DrainLane]: DrainLaneJob;
  [JobName.ReconcileLanes]: Record<string, never>;
  [JobName.PruneDeadLetters]: Record<string, never>;
}

export type JobOf<N extends JobName> = { name: N; data: JobPayloads[N] };

/** Which queue each job name runs on; a processor registers for exactly these. */
export const JOB_QUEUES: Readonly<Record<JobName, QueueName>> = Object.freeze({
  [JobName.DrainLane]: QueueName.Delivery,
  [JobName.ReconcileLanes]: QueueName.Maintenance,
  [JobName.PruneDeadLetters]: QueueName.Maintenance,
});

/**
 * Drain jobs hold no data worth keeping: the lane in Redis is the record. They are
 * removed when done so a lane's next job id never meets an old one; failed ones are
 * kept a day for inspection (the reconciler restarts their lanes).
 */
export const DRAIN_JOB_OPTIONS = Object.freeze({
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600 },
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
});

/** Lock a drain job for 30 s, renewed while it runs; a crashed worker's job is re-run. */
export const DRAIN_LOCK_DURATION_MS = 30_000;
/** A lane's job may stall many times (a dispatcher killed again and again) and still be re-run. */
export const DRAIN_MAX_STALLED_COUNT = 1000;

export const RECONCILE_EVERY_MS = 10_000;
export const PRUNE_DEAD_LETTERS_EVERY_MS = 3600_000;

/** Dead letters are kept for 7 days. */
export const DEAD_LETTER_RETENTION_MS = 7 * 24 * 3600_000;
/** Telegram keeps an update for 24 h; a repeat within that window is a duplicate. */
export const DEDUP_WINDOW_SECONDS = 24 * 3600;
