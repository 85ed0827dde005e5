import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';

/**
 * kill -9 a random live dispatcher every 1-3 s while the updates come in, and start it
 * again at once. A killed dispatcher's drain jobs keep their BullMQ locks until they
 * expire (30 s); the stalled check (every 15 s) then hands them to the other replica,
 * which sends the head again: the drain takes that long after the last kill.
 */
export const dispatcherKill: Scenario = {
  name: 'dispatcher-kill',
  summary: 'kill -9 a random dispatcher every 1-3 s during the load',
  async body({ cluster, quick }, traffic) {
    const count = quick ? 2_000 : 20_000;
    const perSecond = quick ? 150 : 250;
    let loading = true;
    let kills = 0;
    let lastKill: number | undefined;
    const chaos = (async () => {
      while (loading) {
        await sleep(1_000 + Math.random() * 2_000);
        if (!loading) break;
        // One killed while starting is started again here (its start failed).
        for (const d of cluster.dispatchers) if (!d.running) void d.start().catch(() => undefined);
        const live = cluster.dispatchers.filter((d) => d.running);
        const victim = live[Math.floor(Math.random() * live.length)];
        if (!victim) continue;
        await victim.kill9();
        kills++;
        lastKill = Date.now();
        // Started again at once; it takes a second or two to be live, and may be the next victim.
        void victim.start().catch(() => undefined);
      }
    })();
    await traffic.load(count, perSecond);
    loading = false;
    await chaos;
    return {
      drainDeadlineMs: quick ? 180_000 : 420_000,
      lastFaultAt: lastKill,
      notes: [`${kills} dispatchers killed with SIGKILL during the load`],
    };
  },
};
