import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { verifyRelaygramV1, verifyStandardWebhook } from '@relaygram/signing';
import { type Delivery, firstArrivals, updateIdOf } from '@relaygram/testing';
import { REPO, appMain, eventually } from './support/app-process';
import { useClusterRig } from './support/cluster-rig';
import { CLUSTER_PREFIX, startTwoBotInstall } from './support/two-bot-install';

const run = promisify(execFile);

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
  const rig = useClusterRig({ webhookRetryDelayMs: 50 });

  it('webhook and polling updates delivered in order, a dead letter re-sent, the gateway, one slot', async () => {
    const secrets = {
      ORDERS_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      SITE_TOKEN: randomBytes(24).toString('base64url'),
      ADMIN_TOKEN: randomBytes(18).toString('base64url'),
    };
    // The first /order is refused (400): it goes dead at once as `rejected`.
    let refuseOrders = true;
    rig.receiver.respondWith((d) =>
      d.path === '/orders' && refuseOrders
        ? { status: 400, body: 'no such product' }
        : { status: 204 },
    );
    const { pollBot, hookBot, env } = await startTwoBotInstall(
      rig.dir,
      rig.emulator,
      rig.receiver,
      {
        redisUrl: rig.cluster.url,
        more: `  - name: orders
    bots: [poll-bot]
    target_url: ${rig.receiver.url}/orders
    signing_secret_env: ORDERS_SECRET
    signature: standard-webhooks
    match:
      commands: [/order]
clients:
  - name: site
    token_env: SITE_TOKEN
    bots: [poll-bot, hook-bot]
`,
        moreEnv: secrets,
        start: ['ingress', 'dispatcher', 'gateway'],
      },
      rig.apps,
    );
    const [ingress, , gateway] = rig.apps;

    // Interleaved chats, ten updates each, through both adapters.
    const sent = new Map<number, number[]>();
    for (let n = 0; n < 10; n++) {
      for (const chat of [101, 102, 103]) {
        const update = rig.emulator.message(pollBot.id, {
          chatId: chat,
          text: `poll ${chat} #${n}`,
        });
        sent.set(chat, [...(sent.get(chat) ?? []), update.update_id]);
      }
      for (const chat of [201, 202]) {
        const update = rig.emulator.message(hookBot.id, {
          chatId: chat,
          text: `hook ${chat} #${n}`,
        });
        sent.set(chat, [...(sent.get(chat) ?? []), update.update_id]);
      }
    }
    const order = rig.emulator.message(pollBot.id, { chatId: 104, text: '/order 2 t-shirts' });
    const total = 50 + 1;

    const everything = () => rig.receiver.deliveries.filter((d) => d.path === '/everything');
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
      expect(() => verifyRelaygramV1(env.EVERYTHING_SECRET, d.body, d.headers)).not.toThrow();
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
    const resent = await rig.receiver.waitFor((d) => d.path === '/orders' && d.status === 204, {
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
      const [call] = await rig.emulator.waitForCalls(identity.id, {
        method: 'sendMessage',
        timeoutMs: 10_000,
      });
      expect(call.params).toMatchObject({ chat_id: 101, text: `hello from ${bot}` });
    }

    // Every key Relaygram wrote, BullMQ's included, is in the slot of the hash tag.
    const slot = Number(
      (await rig.cluster.cli(rig.cluster.ports[0], 'cluster', 'keyslot', CLUSTER_PREFIX)).trim(),
    );
    const sizes = await Promise.all(
      rig.cluster.ports.map(async (port) => Number((await rig.cluster.cli(port, 'dbsize')).trim())),
    );
    const inSlot = Math.max(
      ...(await Promise.all(
        rig.cluster.ports.map(async (port) =>
          Number((await rig.cluster.cli(port, 'cluster', 'countkeysinslot', String(slot))).trim()),
        ),
      )),
    );
    expect(sizes.filter((size) => size > 0)).toHaveLength(1);
    expect(inSlot).toBe(Math.max(...sizes));
    const keys = (await rig.cluster.cli(rig.cluster.ports[sizes.indexOf(inSlot)], 'keys', '*'))
      .trim()
      .split('\n');
    expect(keys.some((key) => key.startsWith(`${CLUSTER_PREFIX}:bull:`))).toBe(true);
    expect(keys.every((key) => key.startsWith(`${CLUSTER_PREFIX}:`))).toBe(true);

    for (const app of rig.apps.splice(0)) expect(await app.stop()).toBe(0);
  }, 180_000);
});
