import { sleep } from '../harness/app-process';
import type { Scenario } from './scenario';

/**
 * kill -9 the redis-server mid-load and start it again on the same AOF (appendfsync
 * everysec) after 2 s. Meanwhile ingress answers 503 (Telegram keeps the updates), the
 * poller keeps its offset, the dispatchers wait; afterwards every client reconnects.
 */
export const redisKill: Scenario = {
  name: 'redis-kill',
  summary: 'kill -9 Redis mid-load, restart it on the same AOF',
  async body({ cluster, quick, log }, traffic) {
    const marks = quick ? [0.5] : [0.3, 0.7];
    const notes: string[] = [];
    let next = 0;
    let backAt: number | undefined;
    await traffic.load(quick ? 1_500 : 6_000, quick ? 120 : 150, {
      during: async (done) => {
        const mark = marks[next];
        if (mark === undefined || done < mark) return;
        next++;
        await cluster.redis.kill9();
        const downAt = Date.now();
        log(`redis-kill: redis-server killed at ${Math.round(done * 100)} % of the load`);
        await sleep(2_000);
        await cluster.redis.start();
        backAt = Date.now();
        notes.push(
          `Redis killed at ${Math.round(done * 100)} % of the load, back after ${Date.now() - downAt} ms on its AOF`,
        );
      },
    });
    return { drainDeadlineMs: quick ? 120_000 : 180_000, notes, lastFaultAt: backAt };
  },
};
