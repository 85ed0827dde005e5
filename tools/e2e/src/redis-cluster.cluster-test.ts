import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@relaygram/queue';
import { verifyRelaygramV1, verifyStandardWebhook } from '@relaygram/signing';
import {
  RecordingReceiver,
  TelegramEmulator,
  type Delivery,
  firstArrivals,
  updateIdOf,
} from '@relaygram/testing';
import { AppProcess, REPO, appMain, eventually, stopAll } from './support/app-process';
import { startRedisCluster, type RedisCluster } from './support/redis-cluster';

const run = promisify(execFile);
const PREFIX = '{relaygram}';

const chatOf = (d: Delivery) =>
  Number(
    ((d.json as { message?: { chat: { id: number } } }).message?.chat.id ?? Number.NaN) as number,
  );

/**
 * The split deployment (ingress, dispatcher, gateway and the CLI, each its own process)
 * on a 3-master Redis Cluster with `redis.prefix: "{relaygram}"`: every key, BullMQ's
 * included, in one slot.
 */
describe('Redis Cluster: the whole flow on redis+cluster://', () => {
  let cluster: RedisCluster;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let dir: string;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    emulator = await TelegramEmulator.start({ webhookRetryDelayMs: 50 });
    receiver = await RecordingReceiver.start();
    dir = mkdtempSync(join(tmpdir(), 'relaygram-cluster-test-'));
  }, 60_000);

  afterAll(async () => {
    await stopAll(apps);
    await receiver?.stop();
    await emulator?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('webhook and polling updates delivered in order, a dead letter re-sent, the gateway, one slot', async () => {
    const pollBot = emulator.addBot({ username: 'poll_bot' });
    const hookBot = emulator.addBot({ username: 'hook_bot' });
    const ingressPort = await freePort();
    const secrets = {
      POLL_BOT_TOKEN: pollBot.token,
      HOOK_BOT_TOKEN: hookBot.token,
      HOOK_BOT_SECRET: randomBytes(16).toString('hex'),
      EVERYTHING_SECRET: randomBytes(32).toString('hex'),
      ORDERS_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      SITE_TOKEN: randomBytes(24).toString('base64url'),
      ADMIN_TOKEN: randomBytes(18).toString('base64url'),
    };
    const configPath = join(dir, 'relaygram.yaml');
    writeFileSync(
      configPath,
      `redis:
  prefix: "${PREFIX}"
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
  - name: orders
    bots: [poll-bot]
    target_url: ${receiver.url}/orders
    signing_secret_env: ORDERS_SECRET
    signature: standard-webhooks
    match:
      commands: [/order]
clients:
  - name: site
    token_env: SITE_TOKEN
    bots: [poll-bot, hook-bot]
`,
    );
    const env = {
      RELAYGRAM_CONFIG: configPath,
      REDIS_URL: cluster.url,
      TELEGRAM_API_BASE: emulator.apiRoot,
      ...secrets,
    };

    // The first /order is refused (400): it goes dead at once as `rejected`.
    let refuseOrders = true;
    receiver.respondWith((d) =>
      d.path === '/orders' && refuseOrders
        ? { status: 400, body: 'no such product' }
        : { status: 204 },
    );

    apps.push(await AppProcess.start('ingress', env, { port: ingressPort }));
    apps.push(await AppProcess.start('dispatcher', env));
    apps.push(await AppProcess.start('gateway', env));
    const [ingress, , gateway] = apps;
    await Promise.all(apps.map((app) => app.ready()));
    await eventually(
      () => emulator.webhookInfo(hookBot.id).url.endsWith('/webhooks/telegram/hook-bot'),
      'the webhook set by ingress',
    );

    // Interleaved chats, ten updates each, through both adapters.
    const sent = new Map<number, number[]>();
    for (let n = 0; n < 10; n++) {
      for (const chat of [101, 102, 103]) {
        const update = emulator.message(pollBot.id, { chatId: chat, text: `poll ${chat} #${n}` });
        sent.set(chat, [...(sent.get(chat) ?? []), update.update_id]);
      }
      for (const chat of [201, 202]) {
        const update = emulator.message(hookBot.id, { chatId: chat, text: `hook ${chat} #${n}` });
        sent.set(chat, [...(sent.get(chat) ?? []), update.update_id]);
      }
    }
    const order = emulator.message(pollBot.id, { chatId: 104, text: '/order 2 t-shirts' });
    const total = 50 + 1;

    const everything = () => receiver.deliveries.filter((d) => d.path === '/everything');
    await eventually(
      () =>
        new Set(
          everything()
            .filter((d) => d.status === 204)
            .map(updateIdOf),
        ).size === total,
      `${total} updates on route everything`,
    );
    for (const [chat, ids] of sent) {
      expect(firstArrivals(everything().filter((d) => chatOf(d) === chat))).toEqual(ids);
    }
    for (const d of everything()) {
      expect(() => verifyRelaygramV1(secrets.EVERYTHING_SECRET, d.body, d.headers)).not.toThrow();
    }

    // The refused /order is a dead letter, seen by the admin API...
    const adminGet = async (path: string) => {
      const res = await fetch(`${ingress.adminUrl}/admin/api${path}`, {
        headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}` },
      });
      expect(res.status).toBe(200);
      return res.json() as Promise<{
        items: { delivery_id: string; reason: string; update_id: number }[];
      }>;
    };
    let dead: { delivery_id: string; reason: string; update_id: number }[] = [];
    await eventually(async () => {
      dead = (await adminGet('/dead-letters?route=orders')).items;
      return dead.length === 1;
    }, 'a dead letter on route orders');
    expect(dead[0]).toMatchObject({ reason: 'rejected', update_id: order.update_id });

    // ...and re-sent by the CLI once the shop accepts it.
    refuseOrders = false;
    const cli = await run(
      process.execPath,
      [appMain('cli'), 'dead', 'replay', '--route', 'orders'],
      {
        cwd: REPO,
        env: { PATH: process.env.PATH ?? '', ...env },
      },
    );
    expect(cli.stdout).toContain('re-sent 1, not re-sent 0');
    const resent = await receiver.waitFor((d) => d.path === '/orders' && d.status === 204, {
      timeoutMs: 30_000,
    });
    expect(resent.headers['x-relaygram-delivery-id']).toBe(dead[0].delivery_id);
    expect(() =>
      verifyStandardWebhook(secrets.ORDERS_SECRET, resent.body, resent.headers),
    ).not.toThrow();
    await eventually(
      async () => (await adminGet('/dead-letters?route=orders')).items.length === 0,
      'the dead letter gone after the re-send',
    );

    // The gateway, for both bots.
    for (const [bot, identity] of [
      ['poll-bot', pollBot],
      ['hook-bot', hookBot],
    ] as const) {
      const res = await fetch(`${gateway.url}/api/v1/${bot}/messages/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-token': secrets.SITE_TOKEN },
        body: JSON.stringify({ chat_id: 101, text: `hello from ${bot}` }),
      });
      expect(res.status).toBe(200);
      const [call] = await emulator.waitForCalls(identity.id, {
        method: 'sendMessage',
        timeoutMs: 10_000,
      });
      expect(call.params).toMatchObject({ chat_id: 101, text: `hello from ${bot}` });
    }

    // Every key Relaygram wrote, BullMQ's included, is in the slot of the hash tag.
    const slot = Number((await cluster.cli(cluster.ports[0], 'cluster', 'keyslot', PREFIX)).trim());
    const sizes = await Promise.all(
      cluster.ports.map(async (port) => Number((await cluster.cli(port, 'dbsize')).trim())),
    );
    const inSlot = Math.max(
      ...(await Promise.all(
        cluster.ports.map(async (port) =>
          Number((await cluster.cli(port, 'cluster', 'countkeysinslot', String(slot))).trim()),
        ),
      )),
    );
    expect(sizes.filter((size) => size > 0)).toHaveLength(1);
    expect(inSlot).toBe(Math.max(...sizes));
    const keys = (await cluster.cli(cluster.ports[sizes.indexOf(inSlot)], 'keys', '*'))
      .trim()
      .split('\n');
    expect(keys.some((key) => key.startsWith(`${PREFIX}:bull:`))).toBe(true);
    expect(keys.every((key) => key.startsWith(`${PREFIX}:`))).toBe(true);

    for (const app of apps.splice(0)) expect(await app.stop()).toBe(0);
  }, 180_000);
});
