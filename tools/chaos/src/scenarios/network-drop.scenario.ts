import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';

/**
 * The network to the `side` receiver drops: the proxy in front of it resets every open
 * connection and every new one for 30 s (8 s with --quick), mid-load. A request cut
 * after the receiver read it makes a duplicate, never a loss.
 */
export const networkDrop: Scenario = {
  name: 'network-drop',
  summary: 'connections to the side receiver reset for a while',
  async body({ cluster, quick }, traffic) {
    const dropMs = quick ? 8_000 : 30_000;
    let dropped = false;
    let restoredAt: number | undefined;
    await traffic.load(quick ? 1_200 : 5_000, quick ? 100 : 100, {
      during: async (done) => {
        if (dropped || done < 0.3) return;
        dropped = true;
        cluster.sideProxy.setMode('reset');
        setTimeout(() => {
          cluster.sideProxy.setMode('pass');
          restoredAt = Date.now();
        }, dropMs);
      },
    });
    // The network comes back before the drain is measured.
    while (cluster.sideProxy.mode === 'reset') await sleep(200);
    return {
      drainDeadlineMs: quick ? 90_000 : 180_000,
      lastFaultAt: restoredAt,
      notes: [`connections to the side receiver reset for ${dropMs / 1000} s`],
    };
  },
};
