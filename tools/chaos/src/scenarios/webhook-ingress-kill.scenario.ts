import { HOOK_BOT } from '../harness/chaos-cluster';
import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';
import { errorMessage } from '@relaygram/contracts';

/**
 * kill -9 a webhook ingress under load, every 3-5 s, and start it again 1-2 s later.
 * Telegram's requests go through a load balancer: the ones in flight on the killed
 * replica are reset and Telegram sends them again, to either replica; an update
 * enqueued just before the kill comes back as a duplicate.
 */
export const webhookIngressKill: Scenario = {
  name: 'webhook-ingress-kill',
  summary: 'kill -9 a webhook ingress under load',
  async body({ cluster, quick, log }, traffic) {
    let loading = true;
    let kills = 0;
    let lastKill: number | undefined;
    const chaos = (async () => {
      while (loading) {
        await sleep(3_000 + Math.random() * 2_000);
        if (!loading) break;
        const victim = cluster.ingress[Math.floor(Math.random() * cluster.ingress.length)];
        if (!victim?.running) continue;
        await victim.kill9();
        kills++;
        lastKill = Date.now();
        await sleep(1_000 + Math.random() * 1_000);
        await victim
          .start()
          .catch((error: unknown) =>
            log(`restart of ${victim.name} failed: ${errorMessage(error)}`),
          );
      }
    })();
    await traffic.load(quick ? 2_000 : 8_000, quick ? 150 : 200, { onlyBot: HOOK_BOT });
    loading = false;
    await chaos;
    return {
      drainDeadlineMs: quick ? 120_000 : 180_000,
      lastFaultAt: lastKill,
      notes: [`${kills} ingress replicas killed with SIGKILL under webhook load`],
    };
  },
};
