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
  /**
   * A lease on one of a route's worker slots: the job claims ready lanes one after the
   * other and delivers their heads, lingers a little when nothing is ready, then ends.
   */
  Drain = 'drain',
  /**
   * A drain job of the engine before `drain`: one per lane activation, data `{lane, gen}`.
   * Jobs of this name still queued after an upgrade are run as `drain` jobs, after the
   * lane they name is put back where a `drain` job finds it.
   */
  DrainLane = 'drain-lane',
  /** Give a drain job to every non-empty lane that has none. */
  ReconcileLanes = 'reconcile-lanes',
  /** Drop dead letters older than their retention from the indexes. */
  PruneDeadLetters = 'prune-dead-letters',
}

/**
 * A drain job carries nothing: what it owns lives in Redis (the route's `drains` hash,
 * fenced by the job's BullMQ lock token), so a re-run after a crash finds it there.
 */
export type DrainJob = Record<string, never>;

/** The data of a `drain-lane` job left over from before `drain` jobs. */
export interface DrainLaneJob {
  lane: string;
  gen: number;
}

/** Job data by job name; producers and processors both type against this. */
export interface JobPayloads {
  [JobName.Drain]: DrainJob;
  [JobName.DrainLane]: DrainLaneJob;
  [JobName.ReconcileLanes]: Record<string, never>;
  [JobName.PruneDeadLetters]: Record<string, never>;
}

/**
 * A job as its processor sees it: the name and the data that goes with it. Distributive,
 * so `JobOf<JobName.Drain | JobName.DrainLane>` is a union that `job.name` narrows. A
 * BullMQ `Job<JobPayloads[N], unknown, N>` is one, so processors take it without a cast;
 * producers build it for `queue.add(job.name, job.data)` / `addBulk`.
 */
export type JobOf<N extends JobName = JobName> = N extends JobName
  ? { readonly name: N; readonly data: JobPayloads[N] }
  : never;

/** The job names that run on one queue (see JOB_QUEUES). */
export type JobNameOn<Q extends QueueName> = {
  [N in JobName]: JobQueues[N] extends Q ? N : never;
}[JobName];

/** Which queue each job name runs on, as a type: JOB_QUEUES is checked against it. */
export interface JobQueues {
  [JobName.Drain]: QueueName.Delivery;
  [JobName.DrainLane]: QueueName.Delivery;
  [JobName.ReconcileLanes]: QueueName.Maintenance;
  [JobName.PruneDeadLetters]: QueueName.Maintenance;
}

/** Which queue each job name runs on; a processor registers for exactly these. */
export const JOB_QUEUES: Readonly<JobQueues> = Object.freeze({
  [JobName.Drain]: QueueName.Delivery,
  [JobName.DrainLane]: QueueName.Delivery,
  [JobName.ReconcileLanes]: QueueName.Maintenance,
  [JobName.PruneDeadLetters]: QueueName.Maintenance,
});

/**
 * Drain jobs hold no data worth keeping: the lanes in Redis are the record. They are
 * removed when done; failed ones are kept a day for inspection (the reconciler puts
 * back what they held). A job that throws (Redis away) is re-run, and the re-run takes
 * back the lane the job held.
 */
export const DRAIN_JOB_OPTIONS = Object.freeze({
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600 },
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
});

/** Lock a drain job for 30 s, renewed while it runs; a crashed worker's job is re-run. */
export const DRAIN_LOCK_DURATION_MS = 30_000;
/** A drain job may stall many times (a dispatcher killed again and again) and still be re-run. */
export const DRAIN_MAX_STALLED_COUNT = 1000;
/**
 * A drain job with nothing ready waits this long for a lane to be handed to it before
 * it ends: at a steady rate the next update finds a waiting job and costs no job add.
 */
export const DRAIN_LINGER_MS = 5_000;
/**
 * A drain job ends after this long (handing its lane on), so locks, counters and
 * memory stay fresh; a successor is armed when work is waiting.
 */
export const DRAIN_LIFETIME_MS = 5 * 60_000;
/**
 * A dispatcher announces itself (for hand-offs and the route's slot count) at least
 * this often, and counts as gone this long after its last announcement.
 */
export const DISPATCHER_HEARTBEAT_MS = 2_000;
export const DISPATCHER_PRESENCE_TTL_MS = 10_000;
/**
 * An armed job whose BullMQ job does not exist yet is given this long (the arming
 * process adds it right after its script) before the reconciler counts it lost.
 */
export const ARMED_JOB_GRACE_MS = 30_000;
/** Slots of a route until a dispatcher has reported its `concurrency` (the config default). */
export const DEFAULT_ROUTE_SLOTS = 32;

export const RECONCILE_EVERY_MS = 10_000;
export const PRUNE_DEAD_LETTERS_EVERY_MS = 3600_000;

/** Dead letters are kept for 7 days. */
export const DEAD_LETTER_RETENTION_MS = 7 * 24 * 3600_000;
/** Telegram keeps an update for 24 h; a repeat within that window is a duplicate. */
export const DEDUP_WINDOW_SECONDS = 24 * 3600;
