import { ARMED_JOB_GRACE_MS, RECONCILE_EVERY_MS } from '@relaygram/contracts';
import { sleep } from '../harness/app-process';
import { HOOK_BOT, INGRESS_SLOTS } from '../harness/chaos-cluster';
import { SlotSupervisor } from '../harness/slot-supervisor';
import type { Scenario } from './scenario';

/**
 * Per enqueue that armed a drain job. At a steady rate most enqueues hand their lane to
 * a waiting job and arm none; the waves arm them by the dozen.
 */
const DIE_AFTER_ENQUEUE = 0.05;

/**
 * Both ingress replicas run with `die_after_enqueue`: after an enqueue script that armed
 * drain jobs, and before adding them to BullMQ (or answering), the process kills
 * itself. The update is in its lanes, the lanes are ready, and the route's drain state
 * counts jobs that will never exist. Telegram gets no answer and sends the update again
 * (a duplicate now); a dead replica is started again after 0.5-1.5 s; the polling bot's
 * lease moves when its holder dies. Every 2-3 s a wave of 200 webhook updates, each in
 * a new chat, makes more lanes ready at once than drain jobs wait, so enqueues arm. Live drain jobs take the ready lanes meanwhile, and
 * the reconciler (every 10 s) drops the armed jobs that never came, once they are
 * older than ARMED_JOB_GRACE_MS (30 s), and arms real ones.
 */
export const ingressKillBeforeArm: Scenario = {
  name: 'ingress-kill-before-arm',
  summary: 'ingress dies between the enqueue script and adding the drain jobs it armed',
  faults: Object.fromEntries(
    INGRESS_SLOTS.map((slot) => [slot, `die_after_enqueue=${DIE_AFTER_ENQUEUE}`]),
  ),
  async body({ cluster, quick, log }, traffic) {
    const supervisor = new SlotSupervisor(
      cluster.ingress,
      log,
      () => 500 + Math.random() * 1_000,
    ).start();
    // Armed jobs without a BullMQ job, seen twice 1.5 s apart (an add in flight is not one).
    const phantoms = new Set<string>();
    let loading = true;
    const watcher = (async () => {
      let seenDeaths = 0;
      while (loading) {
        await sleep(250);
        if (supervisor.deaths === seenDeaths) continue;
        seenDeaths = supervisor.deaths;
        await sleep(1_500);
        const first = new Set(await cluster.drainJobs.phantomArmed(cluster.routeNames));
        await sleep(1_500);
        for (const job of await cluster.drainJobs.phantomArmed(cluster.routeNames)) {
          if (first.has(job)) phantoms.add(job);
        }
      }
    })();
    let waves = 0;
    const pressure = (async () => {
      while (loading) {
        await sleep(2_000 + Math.random() * 1_000);
        if (!loading) break;
        traffic.wave(HOOK_BOT, 200);
        waves++;
      }
    })();
    await traffic.load(quick ? 1_500 : 8_000, quick ? 100 : 150);
    loading = false;
    await Promise.all([watcher, pressure]);
    // Starts from now on are clean (the next scenario replaces the faulty processes);
    // with no load, no enqueue arms a job any more.
    for (const slot of cluster.ingress) slot.faults = undefined;
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt: () => supervisor.lastDeathAt,
      cleanup: () => supervisor.stop(),
      notes: [
        () =>
          `${supervisor.deaths} ingress deaths between the enqueue script and the job add ` +
          `(die_after_enqueue=${DIE_AFTER_ENQUEUE}); ${phantoms.size} armed drain jobs seen ` +
          `never added, left to the reconciler (grace ${ARMED_JOB_GRACE_MS / 1000} s, ` +
          `every ${RECONCILE_EVERY_MS / 1000} s); ${waves} waves of 200 webhook updates`,
      ],
      checks: [
        () => (supervisor.deaths > 0 ? undefined : 'no ingress died after an enqueue'),
        () =>
          phantoms.size > 0
            ? undefined
            : 'no armed drain job was seen without its BullMQ job after a death',
      ],
    };
  },
};
