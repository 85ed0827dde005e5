import { DispatcherKills } from '../harness/dispatcher-kills';
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
    const kills = new DispatcherKills(cluster, () => 1_000 + Math.random() * 2_000);
    await traffic.load(count, perSecond);
    await kills.stop();
    return {
      drainDeadlineMs: quick ? 180_000 : 420_000,
      lastFaultAt: kills.lastKill,
      notes: [`${kills.kills} dispatchers killed with SIGKILL during the load`],
    };
  },
};
