import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { freePort } from '@relaygram/queue';
import {
  RecordingReceiver,
  TelegramEmulator,
  type Delivery,
  firstArrivals,
  updateIdOf,
} from '@relaygram/testing';
import { AppProcess, eventually, stopAll } from './support/app-process';
import { startRedisCluster, type RedisCluster } from './support/redis-cluster';

const PREFIX = '{relaygram}';
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
  let cluster: RedisCluster;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let dir: string;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: 2_000 });
    emulator = await TelegramEmulator.start({ webhookRetryDelayMs: 100 });
    receiver = await RecordingReceiver.start();
    dir = mkdtempSync(join(tmpdir(), 'relaygram-failover-test-'));
  }, 60_000);

  afterAll(async () => {
    await stopAll(apps);
    await receiver?.stop();
    await emulator?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

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
      for (const app of apps.splice(0)) expect(await app.stop()).toBe(0);
    },
    240_000,
  );

  async function runFailover(waitReplicas: number): Promise<FailoverAudit> {
    const pollBot = emulator.addBot({ username: 'failover_poll_bot' });
    const hookBot = emulator.addBot({ username: 'failover_hook_bot' });
    const ingressPort = await freePort();
    const configPath = join(dir, 'relaygram.yaml');
    writeFileSync(
      configPath,
      `redis:
  prefix: "${PREFIX}"
  wait_replicas: ${waitReplicas}
  wait_timeout: 300ms
bots:
  - id: poll-bot
    token_env: POLL_BOT_TOKEN
    mode: polling
  - id: hook-bot
    token_env: HOOK_BOT_TOKEN
    mode: webhook
    webhook:
      url: http://127.0.0.1:${ingressPort}/webhooks/telegram/hook-bot
      secret_token_env: HOOK_BOT_SECRET
routes:
  - name: everything
    target_url: ${receiver.url}/everything
    signing_secret_env: EVERYTHING_SECRET
`,
    );
    const env = {
      RELAYGRAM_CONFIG: configPath,
      REDIS_URL: cluster.url,
      TELEGRAM_API_BASE: emulator.apiRoot,
      POLL_BOT_TOKEN: pollBot.token,
      HOOK_BOT_TOKEN: hookBot.token,
      HOOK_BOT_SECRET: randomBytes(16).toString('hex'),
      EVERYTHING_SECRET: randomBytes(32).toString('hex'),
    };
    // The target fails while the replica lags, so what is accepted then stays queued on
    // the master (as it would behind any slow target) instead of being delivered at once.
    let targetDown = false;
    receiver.respondWith(() => (targetDown ? { status: 503, body: 'down' } : { status: 204 }));
    apps.push(await AppProcess.start('ingress', env, { port: ingressPort }));
    apps.push(await AppProcess.start('dispatcher', env));
    await Promise.all(apps.map((app) => app.ready()));
    await eventually(
      () => emulator.webhookInfo(hookBot.id).url.endsWith('/webhooks/telegram/hook-bot'),
      'the webhook set by ingress',
    );

    const slot = calculateSlot(PREFIX);
    const master = await cluster.masterOf(slot);
    if (master === undefined) throw new Error(`no master serves slot ${slot}`);
    const [replica] = await cluster.replicasOf(master);
    if (replica === undefined) throw new Error(`the master of slot ${slot} has no replica`);

    const bots = [
      { name: 'poll', id: pollBot.id },
      { name: 'hook', id: hookBot.id },
    ] as const;
    const pending = () =>
      bots.reduce((sum, bot) => sum + emulator.pendingUpdates(bot.id).length, 0);
    const sent = new Map<string, number[]>();
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
      const update = emulator.message(bot.id, { chatId: chat, text: `${bot.name} ${chat} #${n}` });
      offered++;
      const key = `${bot.name}:${chat}`;
      sent.set(key, [...(sent.get(key) ?? []), update.update_id]);
      const elapsed = Date.now() - started;
      if (acknowledgedBeforeFreeze === undefined && elapsed >= FREEZE_AT_MS) {
        acknowledgedBeforeFreeze = acknowledged();
        targetDown = true;
        // Stopped, the replica cannot reconnect once the master drops its link: what the
        // master takes from now on is on the master alone (what the kernel had already
        // buffered for the replica still reaches it).
        cluster.freeze(replica);
        await cluster.cli(master, 'client', 'kill', 'type', 'replica');
      }
      if (acknowledgedAtKill === undefined && elapsed >= KILL_AT_MS) {
        acknowledgedAtKill = acknowledged();
        cluster.kill(master);
        const killedAt = Date.now();
        cluster.thaw(replica);
        promotion = eventually(
          async () => (await cluster.masterOf(slot)) === replica,
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
    await cluster.restart(master);
    await eventually(
      async () =>
        (await cluster.cli(master, 'info', 'replication')).includes('master_link_status:up'),
      'the failed master back as a replica',
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // Telegram's side: everything it sent ends acknowledged once the install works again.
    await eventually(() => pending() === 0, 'every update acknowledged to the emulator', {
      timeoutMs: 90_000,
      intervalMs: 250,
    });

    // Every update delivered, or what never will be: a lane whose last writes the master
    // took with it is repaired by the reconciler, which can take it tens of seconds.
    const ok = () =>
      receiver.deliveries.filter((d) => d.path === '/everything' && d.status === 204);
    const delivered = () => new Set(ok().map(updateIdOf));
    const all = [...sent.values()].flat();
    await eventually(() => all.every((id) => delivered().has(id)), 'every update delivered', {
      timeoutMs: setting.loses ? 45_000 : 120_000,
      intervalMs: 500,
    }).catch(() => undefined);
    const got = delivered();

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
