import { sleep } from '../harness/app-process';
import { POLL_BOT } from '../harness/chaos-cluster';
import type { Deleted } from '../harness/drain-jobs';
import type { Scenario } from './scenario';

/**
 * Under load, an operator deletes drain jobs by hand, every second or two: waiting and delayed
 * ones (the wake jobs of lanes backing off: `commands` answers 503 to a third of its
 * requests) through BullMQ's Queue API, and active ones the way redis-cli would: out
 * of the active list, the job hash and its lock deleted. A deleted job's entry still
 * holds its lane, or counts as armed or waiting; the process running a deleted active
 * job is refused at its next lane script (no lock) and stops. The reconciler (every
 * 10 s) finds the jobs gone, puts their lanes back and arms new jobs (an armed job is
 * given 30 s to be added first). Waves (an update in each of 300 new chats) and bursts
 * (250 updates in one chat) arm jobs in numbers, so that some are caught waiting.
 */
export const drainJobsDeleted: Scenario = {
  name: 'drain-jobs-deleted',
  summary: 'drain jobs deleted by hand under load (Queue API, and redis-cli on active ones)',
  async body({ cluster, quick, log }, traffic) {
    cluster.receiver('side').behaviour = () => ({ status: 204, delayMs: 100 });
    cluster.receiver('commands').behaviour = () =>
      Math.random() < 0.33 ? { status: 503 } : { status: 204 };
    const deleted: Deleted = { waiting: 0, delayed: 0, active: 0 };
    const minRounds = quick ? 8 : 40;
    const loadEnds = Date.now() + (quick ? 12_000 : 80_000);
    let rounds = 0;
    let lastDeletion: number | undefined;
    const loading = () => rounds < minRounds || Date.now() < loadEnds;
    const operator = (async () => {
      while (loading()) {
        if (rounds % 2) traffic.burst(250);
        else traffic.wave(POLL_BOT, 300);
        // These reach ingress with the next getUpdates and arm jobs by the dozen: look for
        // waiting ones meanwhile.
        const until = Date.now() + 1_000;
        let queued = 0;
        while (Date.now() < until && queued === 0) {
          const removed = await cluster.drainJobs.deleteQueued([...cluster.routeNames], 3);
          deleted.waiting += removed.waiting;
          deleted.delayed += removed.delayed;
          queued += removed.waiting + removed.delayed;
          await sleep(20);
        }
        const routes = [...cluster.routeNames];
        const route = routes[rounds % routes.length] as string;
        deleted.active += (await cluster.drainJobs.deleteActive(route, 2)).length;
        rounds++;
        lastDeletion = Date.now();
        await sleep(500 + Math.random() * 500);
      }
    })();
    await traffic.loadWhile(quick ? 100 : 150, loading);
    await operator;
    log(
      `drain-jobs-deleted: ${deleted.waiting} waiting, ${deleted.delayed} delayed and ` +
        `${deleted.active} active drain jobs deleted`,
    );
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt: lastDeletion,
      notes: [
        `${rounds} rounds of deletions: ${deleted.waiting} waiting and ${deleted.delayed} ` +
          `delayed drain jobs removed with the Queue API, ${deleted.active} active ones ` +
          `deleted from Redis (active list, job hash, lock)`,
      ],
      checks: [
        () => (deleted.active > 0 ? undefined : 'no active drain job was deleted'),
        () =>
          deleted.waiting + deleted.delayed > 0
            ? undefined
            : 'no waiting or delayed drain job was deleted',
      ],
    };
  },
};
