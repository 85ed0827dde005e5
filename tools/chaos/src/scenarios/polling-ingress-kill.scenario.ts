import { DEDUP_BLOCK_BITS } from '@relaygram/contracts';
import { HOOK_BOT, POLL_BOT, type ChaosCluster } from '../harness/chaos-cluster';
import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';

const BURST = 300;

/**
 * kill -9 the ingress holding the polling lease while it enqueues a batch: a burst of
 * 300 updates is injected and the poller is killed 5-40 ms after it got the first 100.
 * The offset in Redis tells how far it got. The other replica takes the lease once its
 * TTL (15 s) runs out, reads from that offset again: what was enqueued is a duplicate,
 * nothing is lost.
 */
export const pollingIngressKill: Scenario = {
  name: 'polling-ingress-kill',
  summary: 'kill -9 the polling ingress mid-batch',
  async body({ cluster, quick, log }, traffic) {
    const rounds = quick ? 1 : 3;
    const notes: string[] = [];
    let lastKill: number | undefined;
    const background = traffic.load(quick ? 1_000 : 4_000, 50, { onlyBot: HOOK_BOT });
    for (let round = 1; round <= rounds; round++) {
      const poller = await waitFor(() => cluster.pollingIngress(), 40_000);
      if (!poller) {
        notes.push(`round ${round}: no ingress held the polling lease within 40 s`);
        continue;
      }
      await sleep(1_000);
      const burst: number[] = [];
      for (let i = 0; i < BURST; i++) burst.push(traffic.next(POLL_BOT).update.update_id);
      // getUpdates hands over 100 at a time: kill once the poller has enqueued some of
      // the first batch but not all of it.
      const target = 1 + Math.floor(Math.random() * 80);
      const deadline = Date.now() + 5_000;
      let enqueued = 0;
      while (Date.now() < deadline) {
        enqueued = await countSeen(cluster, burst.slice(0, 100));
        if (enqueued >= target) break;
        await sleep(1);
      }
      await poller.kill9();
      const atKill = await countSeen(cluster, burst);
      const offset = Number(await cluster.inspect.get(cluster.keys.pollerOffset(POLL_BOT)));
      const confirmed = Math.max(0, Math.min(BURST, offset - (burst[0] ?? 0)));
      notes.push(
        `round ${round}: ${poller.name} killed with ${atKill} of a ${BURST}-update burst enqueued ` +
          `(${enqueued} seen just before the kill), ${confirmed} confirmed to Telegram`,
      );
      log(`polling-ingress-kill: ${notes[notes.length - 1]}`);
      const killedAt = Date.now();
      lastKill = killedAt;
      await sleep(2_000);
      await poller.start();
      const next = await waitFor(() => cluster.pollingIngress(), 40_000);
      notes.push(
        next
          ? `round ${round}: ${next.name} polling ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill (lease TTL 15 s)`
          : `round ${round}: nobody polling 40 s after the kill`,
      );
      // Updates keep coming for the polling bot while the lease changes hands.
      for (let i = 0; i < 200; i++) {
        traffic.next(POLL_BOT);
        if (i % 20 === 0) await sleep(100);
      }
    }
    await background;
    return { drainDeadlineMs: quick ? 120_000 : 180_000, notes, lastFaultAt: lastKill };
  },
};

/** How many of these updates the dedup bitmap has marked seen (enqueued). */
async function countSeen(cluster: ChaosCluster, ids: readonly number[]): Promise<number> {
  const pipeline = cluster.inspect.pipeline();
  for (const id of ids) {
    pipeline.getbit(
      cluster.keys.dedup(POLL_BOT, Math.floor(id / DEDUP_BLOCK_BITS)),
      id % DEDUP_BLOCK_BITS,
    );
  }
  const results = (await pipeline.exec()) ?? [];
  return results.filter(([error, bit]) => !error && bit === 1).length;
}

async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(250);
  }
  return undefined;
}
