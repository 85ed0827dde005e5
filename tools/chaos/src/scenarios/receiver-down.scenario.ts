import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';

/**
 * The `commands` receiver goes away (connection refused) for 2 minutes (20 s with
 * --quick) under load, then comes back. Its lanes wait with backoff (capped at 10 s
 * in this install); the other routes are not held up.
 */
export const receiverDown: Scenario = {
  name: 'receiver-down',
  summary: 'the commands receiver down for a while, then back',
  async body({ cluster, quick }, traffic) {
    const downMs = quick ? 20_000 : 120_000;
    const receiver = cluster.receiver('commands');
    await receiver.takeDown();
    const downAt = Date.now();
    await traffic.load(Math.round((downMs / 1000) * (quick ? 40 : 30)), quick ? 40 : 30);
    await sleep(Math.max(0, downMs - (Date.now() - downAt)));
    await receiver.bringUp();
    const upAt = Date.now();
    return {
      drainDeadlineMs: quick ? 90_000 : 180_000,
      lastFaultAt: upAt,
      notes: [`commands receiver down for ${Math.round((Date.now() - downAt) / 1000)} s`],
    };
  },
};
