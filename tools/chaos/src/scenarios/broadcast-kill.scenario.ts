import { BROADCAST_CONCURRENCY } from '@relaygram/contracts';
import { auditBroadcast } from '../audit/broadcast-audit';
import { sleep } from '../harness/app-process';
import { BroadcastTraffic } from '../harness/broadcast-traffic';
import { HOOK_BOT } from '../harness/chaos-cluster';
import { DispatcherKills } from '../harness/dispatcher-kills';
import type { Scenario } from './scenario';

/**
 * The chaos bots' pacing (30 per second, broadcast_share 0.8) gives broadcasts 2 of
 * every 3 sends per 100 ms: 20 per second.
 */
const BROADCAST_RATE = 20;

/**
 * A broadcast to a few thousand chats (`POST /api/v1/hook-bot/broadcasts`) beside a
 * small update load, while a random dispatcher is killed with SIGKILL every 2-4 s
 * (started again at once) and the gateway once, mid-way (started again a second
 * later). What Telegram (the emulator) answered 200 is then held to
 * docs/guarantees.md "Broadcasts": every recipient reached, a recipient sent twice
 * only within the window (at most the sends one dispatcher has in flight, per kill),
 * no chat reached that was no recipient, and the broadcast reads `done` with every
 * recipient counted sent.
 */
export const broadcastKill: Scenario = {
  name: 'broadcast-kill',
  summary: 'kill -9 dispatchers and the gateway while a broadcast is sent',
  async body({ cluster, quick, log }, traffic) {
    const broadcast = new BroadcastTraffic(cluster, HOOK_BOT, quick ? 400 : 2_400);
    const planMs = (broadcast.recipients.length / BROADCAST_RATE) * 1000;
    if (!(await broadcast.post(Date.now() + 60_000))) {
      throw new Error(`the broadcast was never accepted: ${broadcast.refusals.at(-1)}`);
    }
    const kills = new DispatcherKills(cluster, () => 2_000 + Math.random() * 2_000);
    const gateway = (async () => {
      await sleep(planMs / 2);
      await cluster.gateway.kill9();
      await sleep(1_000);
      await cluster.gateway.start();
      return Date.now();
    })();
    await Promise.all([traffic.load(quick ? 400 : 2_000, 50), sleep(planMs * 0.8)]);
    await kills.stop();
    const gatewayBackAt = await gateway;
    const lastFaultAt = Math.max(kills.lastKill ?? 0, gatewayBackAt);
    const deadline = Date.now() + planMs + (quick ? 90_000 : 150_000);
    let seen: Awaited<ReturnType<BroadcastTraffic['waitDone']>>;
    const done = async () => (seen ??= await broadcast.waitDone(deadline));
    const audit = async () => {
      await done();
      return auditBroadcast(
        broadcast.recipients,
        broadcast.made(),
        kills.kills + 1,
        BROADCAST_CONCURRENCY,
      );
    };
    log(`broadcast-kill: ${broadcast.recipients.length} recipients, ${kills.kills} kills`);
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt,
      checks: [
        () => (kills.kills > 0 ? undefined : 'no dispatcher was killed'),
        async () => {
          const view = await done();
          if (!view) return 'the broadcast never read done';
          return view.sent === view.total && view.total === broadcast.recipients.length
            ? undefined
            : `the broadcast reads ${JSON.stringify(view)}`;
        },
        async () => {
          const { lost } = await audit();
          return lost.length
            ? `${lost.length} recipients never reached: ${lost.slice(0, 5).join(', ')}`
            : undefined;
        },
        async () => {
          const { stray } = await audit();
          return stray.length ? `${stray.length} chats reached that were no recipient` : undefined;
        },
        async () => {
          const a = await audit();
          return a.duplicates <= a.allowed
            ? undefined
            : `${a.duplicates} copies sent again, beyond the window of ${a.allowed}`;
        },
      ],
      notes: [
        () =>
          `broadcast: ${broadcast.recipients.length} recipients, accepted after ${broadcast.posts} POST(s); ` +
          `${kills.kills} dispatcher kills and the gateway once`,
        () => {
          const a = auditBroadcast(
            broadcast.recipients,
            broadcast.made(),
            kills.kills + 1,
            BROADCAST_CONCURRENCY,
          );
          return (
            `broadcast: ${a.reached}/${a.recipients} reached, ${a.duplicates} copies sent again ` +
            `to ${a.duplicated} recipients (in flight when their dispatcher died; ${a.allowed} allowed)`
          );
        },
      ],
    };
  },
};
