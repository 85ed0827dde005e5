import { DISPATCHER_SLOTS } from '../harness/chaos-cluster';
import { DispatcherKills } from '../harness/dispatcher-kills';
import { LogMarks } from '../harness/log-marks';
import type { Scenario } from './scenario';

const LOCK_MS = 5_000;

/**
 * The dispatchers run with `max_stalled_count=0` and a 5 s drain lock, and one of them
 * is killed with SIGKILL every 4-6 s (3-5 s with --quick) under load, and started again
 * at once. BullMQ's stalled check finds the killed process's jobs without a lock and,
 * at their first stall, fails them for good instead of running them again: the lanes
 * they held are recorded as theirs, and no job will ever take them back. Only the
 * reconciler (every 10 s) can: it sees the failed job, drops it, and gives its lane to
 * the route again.
 */
export const stalledForGood: Scenario = {
  name: 'stalled-for-good',
  summary:
    "max_stalled_count=0: a killed dispatcher's drain jobs fail for good; the reconciler repairs",
  faults: Object.fromEntries(
    DISPATCHER_SLOTS.map((slot) => [slot, `max_stalled_count=0,drain_lock_ms=${LOCK_MS}`]),
  ),
  async body({ cluster, quick }, traffic) {
    const marks = new LogMarks(cluster.dispatchers);
    const failedBefore = await cluster.drainJobs.failed(cluster.routeNames);
    const kills = new DispatcherKills(
      cluster,
      () => (quick ? 3_000 : 4_000) + Math.random() * 2_000,
    );
    await traffic.load(quick ? 1_200 : 12_000, quick ? 100 : 150);
    await kills.stop();
    let failed = 0;
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt: kills.lastKill,
      notes: [
        `${kills.kills} dispatchers killed with SIGKILL (max_stalled_count=0, ${LOCK_MS / 1000} s drain lock)`,
        () =>
          `${failed} drain jobs failed for good in BullMQ (their failed sets), ` +
          `${marks.count('drain job failed')} "drain job failed" lines; the reconciler ` +
          `repaired lanes in ${marks.count('lanes reconciled')} of its runs`,
      ],
      checks: [
        async () => {
          failed = (await cluster.drainJobs.failed(cluster.routeNames)) - failedBefore;
          return failed > 0
            ? undefined
            : 'no drain job failed for good: nothing was left to the reconciler';
        },
      ],
    };
  },
};
