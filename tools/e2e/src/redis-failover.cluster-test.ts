import calculateSlot from 'cluster-key-slot';
import { type Delivery, firstArrivals, updateIdOf } from '@relaygram/testing';
import { eventually } from './support/app-process';
import { useClusterRig } from './support/cluster-rig';
import { CLUSTER_PREFIX, startTwoBotInstall } from './support/two-bot-install';

const CHATS = [301, 302, 303, 304];
/** Updates offered per second, spread over both bots and every chat. */
const RATE = 40;
const LOAD_MS = 12_000;
/** Into the load: the replica stops taking the master's writes, then the master dies. */
const FREEZE_AT_MS = 3_000;
const KILL_AT_MS = 4_500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What one run saw: printed, and the numbers of docs/scaling.md's table. */
interface FailoverAudit {
  sent: number;
  acknowledgedBeforeFreeze: number;
  acknowledgedWhileLagging: number;
  promotedAfterMs: number;
  lost: number[];
  duplicates: number;
  outOfOrderChats: string[];
}

/**
 * What a Redis Cluster failover costs: 3 masters with a replica each, ingress (a webhook
 * bot and a polling bot) and a dispatcher under a steady load. The replica of the master
 * holding the install's slot falls behind (stopped with SIGSTOP, its link dropped by the
 * master, as a network partition or a full output buffer would do), then the master is
 * killed with SIGKILL and the replica, thawed, promoted with what it had. The failed
 * node comes back as the new master's replica.
 *
 * The emulator keeps every update it was not told had arrived (webhook 2xx, or a later
 * getUpdates offset) and sends it again, as Telegram does, so the audit is: every update
 * it counts as acknowledged is delivered, and first arrivals keep each chat's order
 * (duplicates are allowed: at least once). With `redis.wait_replicas: 1` nothing is lost;
 * without it, what was acknowledged while the replica lagged is, which shows the audit
 * can see a loss.
 */
describe.each([
  { waitReplicas: 1, loses: false },
  { waitReplicas: 0, loses: true },
])('Redis Cluster failover under load, redis.wait_replicas: $waitReplicas', (setting) => {
  const rig = useClusterRig({ replicas: 1, nodeTimeoutMs: 2_000, webhookRetryDelayMs: 100 });

  it(
    setting.loses
      ? 'loses what was acknowledged while the promoted replica lagged'
      : 'loses no acknowledged update and keeps each chat in order',
    async () => {
      const audit = await runFailover(setting.waitReplicas);
      process.stdout.write(
        `redis failover audit, wait_replicas ${setting.waitReplicas}: ${JSON.stringify({
          ...audit,
          lost: audit.lost.length,
        })}\n`,
      );
      expect(audit.outOfOrderChats).toEqual([]);
      if (setting.loses) {
        expect(audit.acknowledgedWhileLagging).toBeGreaterThan(0);
        expect(audit.lost.length).toBeGreaterThan(0);
      } else {
        expect(audit.lost).toEqual([]);
      }
      for (const app of rig.apps.splice(0)) expect(await app.stop()).toBe(0);
    },
    240_000,
  );

  async function runFailover(waitReplicas: number): Promise<FailoverAudit> {
    // The target fails while the replica lags, so what is accepted then stays queued on
    // the master (as it would behind any slow target) instead of being delivered at once.
    let targetDown = false;
    rig.receiver.respondWith(() => (targetDown ? { status: 503, body: 'down' } : { status: 204 }));
    const { pollBot, hookBot } = await startTwoBotInstall(
      rig.dir,
      rig.emulator,
      rig.receiver,
      {
        redisUrl: rig.cluster.url,
        redisKeys: `  wait_replicas: ${waitReplicas}\n  wait_timeout: 300ms\n`,
        start: ['ingress', 'dispatcher'],
      },
      rig.apps,
    );

    const slot = calculateSlot(CLUSTER_PREFIX);
    const master = await rig.cluster.masterOf(slot);
    if (master === undefined) throw new Error(`no master serves slot ${slot}`);
    const [replica] = await rig.cluster.replicasOf(master);
    if (replica === undefined) throw new Error(`the master of slot ${slot} has no replica`);

    const bots = [
      { name: 'poll', id: pollBot.id },
      { name: 'hook', id: hookBot.id },
    ] as const;
    const pending = () =>
      bots.reduce((sum, bot) => sum + rig.emulator.pendingUpdates(bot.id).length, 0);
    const sent = new Map<string, number[]>();
    /** Offered after the kill: acknowledged only by the promoted replica, never lost. */
    const afterKill: number[] = [];
    let offered = 0;
    const acknowledged = () => offered - pending();

    // The load, at RATE/s over both bots and every chat; the failure comes into it.
    const started = Date.now();
    let acknowledgedBeforeFreeze: number | undefined;
    let acknowledgedAtKill: number | undefined;
    let promotion: Promise<number> | undefined;
    for (let n = 0; Date.now() - started < LOAD_MS; n++) {
      const bot = bots[n % bots.length] as (typeof bots)[number];
      const chat = CHATS[Math.floor(n / bots.length) % CHATS.length] as number;
      const update = rig.emulator.message(bot.id, {
        chatId: chat,
        text: `${bot.name} ${chat} #${n}`,
      });
      offered++;
      if (acknowledgedAtKill !== undefined) afterKill.push(update.update_id);
      const key = `${bot.name}:${chat}`;
      sent.set(key, [...(sent.get(key) ?? []), update.update_id]);
      const elapsed = Date.now() - started;
      if (acknowledgedBeforeFreeze === undefined && elapsed >= FREEZE_AT_MS) {
        acknowledgedBeforeFreeze = acknowledged();
        targetDown = true;
        // Stopped, the replica cannot reconnect once the master drops its link: what the
        // master takes from now on is on the master alone (what the kernel had already
        // buffered for the replica still reaches it).
        rig.cluster.freeze(replica);
        await rig.cluster.cli(master, 'client', 'kill', 'type', 'replica');
      }
      if (acknowledgedAtKill === undefined && elapsed >= KILL_AT_MS) {
        acknowledgedAtKill = acknowledged();
        rig.cluster.kill(master);
        const killedAt = Date.now();
        rig.cluster.thaw(replica);
        promotion = eventually(
          async () => (await rig.cluster.masterOf(slot)) === replica,
          'the replica promoted',
          { timeoutMs: 30_000, intervalMs: 100 },
        ).then(() => Date.now() - killedAt);
      }
      await sleep(1000 / RATE);
    }
    if (promotion === undefined || acknowledgedBeforeFreeze === undefined) {
      throw new Error('the load ended before the failure');
    }
    const promotedAfterMs = await promotion;
    targetDown = false;

    // The failed node back, as the promoted one's replica (until then, with
    // wait_replicas: 1, every update is answered 503 and Telegram keeps it).
    await rig.cluster.restart(master);
    await eventually(
      async () =>
        (await rig.cluster.cli(master, 'info', 'replication')).includes('master_link_status:up'),
      'the failed master back as a replica',
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // Telegram's side: everything it sent ends acknowledged once the install works again.
    await eventually(() => pending() === 0, 'every update acknowledged to the emulator', {
      timeoutMs: 90_000,
      intervalMs: 250,
    });

    // Settled once everything offered after the kill is delivered: every chat has some,
    // and a chat's lane delivers in order, so whatever of it survived came first. A lane
    // whose last writes the master took with it is repaired by the reconciler first,
    // which can take tens of seconds.
    const ok = () =>
      rig.receiver.deliveries.filter((d) => d.path === '/everything' && d.status === 204);
    const delivered = () => new Set(ok().map(updateIdOf));
    await eventually(
      () => afterKill.every((id) => delivered().has(id)),
      'every update offered after the kill delivered',
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const got = delivered();
    const all = [...sent.values()].flat();

    const outOfOrderChats: string[] = [];
    for (const [key, ids] of sent) {
      const [name, chat] = key.split(':') as [string, string];
      const ofChat = ok().filter((d) => textOf(d).startsWith(`${name} ${chat} `));
      const firsts = firstArrivals(ofChat);
      // Lost updates are counted apart; the order is that of the ones that arrived.
      const expected = ids.filter((id) => got.has(id));
      if (JSON.stringify(firsts) !== JSON.stringify(expected)) outOfOrderChats.push(key);
    }
    return {
      sent: offered,
      acknowledgedBeforeFreeze,
      acknowledgedWhileLagging: (acknowledgedAtKill ?? 0) - acknowledgedBeforeFreeze,
      promotedAfterMs,
      lost: all.filter((id) => !got.has(id)),
      duplicates: ok().length - got.size,
      outOfOrderChats,
    };
  }
});

function textOf(d: Delivery): string {
  return (d.json as { message?: { text?: string } }).message?.text ?? '';
}
