import { DRAIN_LINGER_MS } from '@relaygram/contracts';
import { sleep } from '../harness/app-process';
import { DISPATCHER_SLOTS, HOOK_BOT, POLL_BOT } from '../harness/chaos-cluster';
import { LivenessRestarts } from '../harness/liveness-restarts';
import { LogMarks } from '../harness/log-marks';
import type { Scenario } from './scenario';

const STALL_AFTER_MS = 4_000;
/** How long waves go on after the load when no stall has been seen yet. */
const WAVES_FOR_MS = 90_000;
/** Drain jobs each dispatcher's route workers start before they stop taking any. */
const JOBS_BEFORE_STALL = [4, 7];

/**
 * Every worker of both dispatchers (each route's and the maintenance one) stops taking
 * jobs after starting a few, while it still says it runs (`stall_worker_after`), as one
 * parked for good on a reconnect did: readiness, heartbeats and the running jobs all
 * look fine. A drain job claims lane after lane, so a few jobs carry a route for a
 * while. Once the same job has waited first in a queue for 4 s (`stall_after_ms`) with
 * no job started, the dispatcher fails `/health/live`; the run restarts it the way
 * Kubernetes does (SIGTERM, SIGKILL after 10 s), and the restarted process stalls
 * again a few jobs later, during the load and the drain alike. Waves after the load
 * make sure some job waits: checked by the run, which fails without a restart.
 */
export const stuckWorkers: Scenario = {
  name: 'stuck-workers',
  summary: 'workers stop taking jobs while they say they run; liveness restarts them',
  faults: Object.fromEntries(
    DISPATCHER_SLOTS.map((slot, i) => [
      slot,
      `stall_worker_after=${JOBS_BEFORE_STALL[i % JOBS_BEFORE_STALL.length]},stall_after_ms=${STALL_AFTER_MS}`,
    ]),
  ),
  async body({ cluster, quick, log }, traffic) {
    const marks = new LogMarks(cluster.dispatchers);
    const restarts = new LivenessRestarts(cluster.dispatchers, log);
    await traffic.load(quick ? 1_500 : 12_000, quick ? 100 : 150);
    // A drain job lives for minutes, so in a short load the few jobs the workers took
    // can carry every lane to the end, and no job ever waits. Once they have idled
    // past their linger and ended, waves of new lanes need jobs that no worker takes.
    const wavesUntil = Date.now() + WAVES_FOR_MS;
    while (restarts.restarts === 0 && Date.now() < wavesUntil) {
      await sleep(DRAIN_LINGER_MS + 1_000);
      traffic.wave(HOOK_BOT, 100);
      traffic.wave(POLL_BOT, 100);
    }
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt: () => restarts.lastRestartAt,
      notes: [
        () =>
          `${restarts.restarts} dispatchers restarted on a failing /health/live ` +
          `(${marks.count('worker takes no jobs while one waits')} stalls logged)`,
      ],
      checks: [
        () =>
          restarts.restarts > 0
            ? undefined
            : 'no dispatcher failed /health/live: the stuck workers went unnoticed',
        () =>
          restarts.reasons.every((r) => r.startsWith('workers take no jobs while jobs wait'))
            ? undefined
            : `liveness failed for another reason: ${restarts.reasons.find((r) => !r.startsWith('workers take no jobs'))}`,
      ],
      cleanup: () => restarts.stop(),
    };
  },
};
