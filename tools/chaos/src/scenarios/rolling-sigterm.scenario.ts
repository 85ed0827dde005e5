import { sleep, type Termination } from '../harness/app-process';
import type { Scenario } from './scenario';

/**
 * A rolling restart under load: each dispatcher in turn gets SIGTERM, is waited for
 * (it must exit by itself, code 0), is started again and answers /health/live, then
 * the next; twice round (three times in the full run). A dispatcher shutting down
 * takes no new job, lets its attempts finish and hands every lane it holds on, to the
 * other replica's waiting jobs or the ready list: no lane waits for a lock to expire,
 * and no BullMQ job of the process is left active behind it. `side` answers in 100 ms,
 * so lanes are held at every SIGTERM.
 */
export const rollingSigterm: Scenario = {
  name: 'rolling-sigterm',
  summary: 'SIGTERM each dispatcher in turn under load, start it again, twice round',
  async body({ cluster, quick, log }, traffic) {
    cluster.receiver('side').behaviour = () => ({ status: 204, delayMs: 100 });
    const rounds = quick ? 2 : 3;
    const shutdowns: { name: string; held: number; end: Termination; leftActive: number }[] = [];
    let lastRestart: number | undefined;
    let loading = true;
    const load = traffic.loadWhile(quick ? 80 : 120, () => loading);
    await sleep(quick ? 2_000 : 5_000);
    for (let round = 1; round <= rounds; round++) {
      for (const slot of cluster.dispatchers) {
        const pid = slot.pid;
        if (pid === undefined) throw new Error(`${slot.name} is not running`);
        const holders = await cluster.drainJobs.holders(cluster.routeNames);
        const held = holders.filter((h) => h.pid === pid).length;
        const end = await slot.terminate();
        const leftActive = await cluster.drainJobs.activeOf(cluster.routeNames, pid);
        shutdowns.push({ name: slot.name, held, end, leftActive });
        log(
          `rolling-sigterm: round ${round}: ${slot.name} held ${held} lanes, exited with ` +
            `${end.signal ?? `code ${end.code}`} after ${end.ms} ms`,
        );
        await slot.start();
        lastRestart = Date.now();
        await sleep((quick ? 500 : 2_000) + Math.random() * 1_000);
      }
    }
    loading = false;
    await load;
    const durations = shutdowns.map((s) => s.end.ms).sort((a, b) => a - b);
    return {
      drainDeadlineMs: quick ? 120_000 : 180_000,
      lastFaultAt: lastRestart,
      notes: [
        `${shutdowns.length} SIGTERMs in ${rounds} rounds, holding ` +
          `${shutdowns.map((s) => s.held).join(', ')} lanes; shutdowns took ` +
          `${durations.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s`,
      ],
      checks: shutdowns.map((s, i) => () => {
        const { end } = s;
        if (end.forced) return `SIGTERM #${i + 1} (${s.name}): still running after 30 s, killed`;
        if (end.code !== 0 || end.signal !== null) {
          return `SIGTERM #${i + 1} (${s.name}): exited with ${end.signal ?? `code ${end.code}`}`;
        }
        return s.leftActive > 0
          ? `SIGTERM #${i + 1} (${s.name}): ${s.leftActive} of its drain jobs still active after its exit`
          : undefined;
      }),
    };
  },
};
