import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type LocalRedis } from '@relaygram/queue';
import {
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  type Delivery,
} from '@relaygram/testing';
import { AppProcess, eventually, stopAll } from './support/app-process';
import { TelegramTap } from './support/telegram-tap';

/** An update as the test sent it, and the lane key each route orders it by. */
interface SentUpdate {
  bot: string;
  updateId: number;
  chat: number;
  kind: 'text' | 'command' | 'callback';
}

const POLL_A = { id: 'poll-a', updates: 2_000, chats: 25 };
const POLL_B = { id: 'poll-b', updates: 1_500, chats: 20 };
const HOOK = { id: 'hook-c', updates: 1_500, chats: 15 };
const TOTAL = POLL_A.updates + POLL_B.updates + HOOK.updates;

/** Which routes an update matches: the four routes of the config below. */
function routesOf(u: SentUpdate): string[] {
  const routes = ['all'];
  if (u.kind === 'command' && u.bot !== HOOK.id) routes.push('commands');
  if (u.bot === HOOK.id) routes.push('hook-strict');
  if (u.kind === 'callback') routes.push('callbacks');
  return routes;
}

/** The lane a route keeps an update in; undefined for `none` ordering (no lanes). */
function laneOf(route: string, u: SentUpdate): string | undefined {
  if (route === 'callbacks') return undefined;
  if (route === 'hook-strict') return u.bot;
  return `${u.bot}/${u.chat}`;
}

const keyOf = (bot: string, updateId: number) => `${bot}#${updateId}`;

function kindOf(n: number): SentUpdate['kind'] {
  if (n % 10 === 3) return 'command';
  if (n % 7 === 5) return 'callback';
  return 'text';
}

/**
 * Scale-out on loopback: 2 ingress, 3 dispatchers and 2 gateways on one Redis, 3 bots
 * (2 polling through the emulator, 1 webhook posted to both ingresses), 4 routes, 5,000
 * updates. Every update reaches every route it matches, first arrivals keep each lane's
 * order, only one process polls a bot at a time, and both gateways reach Telegram.
 */
describe('scale-out: 2 ingress, 3 dispatchers, 2 gateways on one Redis', () => {
  let redis: LocalRedis;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let dir: string;
  const taps: TelegramTap[] = [];
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await TelegramEmulator.start({ historyLimit: 50_000, messageLimit: 20_000 });
    receiver = await RecordingReceiver.start();
    dir = mkdtempSync(join(tmpdir(), 'relaygram-scale-'));
  }, 60_000);

  afterAll(async () => {
    await stopAll(apps);
    for (const tap of taps) await tap.stop();
    await receiver?.stop();
    await emulator?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('delivers 5,000 updates to every matching route, in lane order, with one poller per bot', async () => {
    const bots: Record<string, BotIdentity> = {
      [POLL_A.id]: emulator.addBot({ username: 'poll_a_bot' }),
      [POLL_B.id]: emulator.addBot({ username: 'poll_b_bot' }),
      [HOOK.id]: emulator.addBot({ username: 'hook_c_bot' }),
    };
    const env = {
      RELAYGRAM_CONFIG: join(dir, 'relaygram.yaml'),
      REDIS_URL: redis.url,
      TELEGRAM_API_BASE: emulator.apiRoot,
      POLL_A_TOKEN: bots[POLL_A.id].token,
      POLL_B_TOKEN: bots[POLL_B.id].token,
      HOOK_C_TOKEN: bots[HOOK.id].token,
      HOOK_C_SECRET: randomBytes(16).toString('hex'),
      SITE_TOKEN: randomBytes(24).toString('base64url'),
    };
    writeFileSync(
      env.RELAYGRAM_CONFIG,
      `redis:
  prefix: scale-${randomBytes(4).toString('hex')}
bots:
  - id: ${POLL_A.id}
    token_env: POLL_A_TOKEN
    mode: polling
  - id: ${POLL_B.id}
    token_env: POLL_B_TOKEN
    mode: polling
  - id: ${HOOK.id}
    token_env: HOOK_C_TOKEN
    mode: webhook
    webhook:
      url: https://relay.example/webhooks/telegram/${HOOK.id}
      secret_token_env: HOOK_C_SECRET
      manage: false
routes:
  - name: all
    target_url: ${receiver.url}/all
    service_token_env: SITE_TOKEN
  - name: commands
    bots: [${POLL_A.id}, ${POLL_B.id}]
    target_url: ${receiver.url}/commands
    service_token_env: SITE_TOKEN
    match:
      commands: [/start, /help]
  - name: hook-strict
    bots: [${HOOK.id}]
    target_url: ${receiver.url}/hook-strict
    service_token_env: SITE_TOKEN
    ordering: strict
  - name: callbacks
    target_url: ${receiver.url}/callbacks
    service_token_env: SITE_TOKEN
    ordering: none
    format: envelope
    match:
      update_types: [callback_query]
clients:
  - name: site
    token_env: SITE_TOKEN
    bots: [${POLL_A.id}, ${POLL_B.id}, ${HOOK.id}]
`,
    );

    // Each ingress reaches Telegram through a tap of its own, to see who polls.
    for (const name of ['ingress-1', 'ingress-2']) {
      const tap = await TelegramTap.start(name, emulator.apiRoot);
      taps.push(tap);
      apps.push(
        await AppProcess.start('ingress', { ...env, TELEGRAM_API_BASE: tap.url }, { name }),
      );
    }
    for (const name of ['dispatcher-1', 'dispatcher-2', 'dispatcher-3']) {
      apps.push(await AppProcess.start('dispatcher', env, { name }));
    }
    for (const name of ['gateway-1', 'gateway-2']) {
      apps.push(await AppProcess.start('gateway', env, { name }));
    }
    const [ingress1, ingress2, , , , gateway1, gateway2] = apps;

    try {
      await Promise.all(apps.map((app) => app.ready(90_000)));

      // Polling bots: updates wait in the emulator until a poller fetches them.
      const sent: SentUpdate[] = [];
      for (const spec of [POLL_A, POLL_B]) {
        const bot = bots[spec.id];
        for (let n = 0; n < spec.updates; n++) {
          const chat = 1_000 + (n % spec.chats);
          const kind = kindOf(n);
          const update =
            kind === 'callback'
              ? emulator.callback(bot.id, { chatId: chat, userId: chat, data: `pick:${n}` })
              : emulator.message(bot.id, {
                  chatId: chat,
                  userId: chat,
                  text: kind === 'command' ? (n % 20 === 3 ? '/start' : '/help me') : `text ${n}`,
                });
          sent.push({ bot: spec.id, updateId: update.update_id, chat, kind });
        }
      }

      // The webhook bot: posted as Telegram would, one at a time (so acceptance order is
      // known for the strict route), alternating between the two ingresses.
      for (let n = 0; n < HOOK.updates; n++) {
        const chat = 5_000 + (n % HOOK.chats);
        const kind = kindOf(n);
        const updateId = 900_000 + n;
        const from = { id: chat, is_bot: false, first_name: 'U' };
        const message = {
          message_id: n + 1,
          from,
          chat: { id: chat, type: 'private', first_name: 'U' },
          date: Math.floor(Date.now() / 1000),
          text: kind === 'command' ? '/start' : `hook ${n}`,
          ...(kind === 'command'
            ? { entities: [{ type: 'bot_command', offset: 0, length: 6 }] }
            : {}),
        };
        const update =
          kind === 'callback'
            ? {
                update_id: updateId,
                callback_query: {
                  id: `cq${n}`,
                  from,
                  message,
                  chat_instance: 'x',
                  data: `pick:${n}`,
                },
              }
            : { update_id: updateId, message };
        const target = n % 2 === 0 ? ingress1 : ingress2;
        const res = await fetch(`${target.url}/webhooks/telegram/${HOOK.id}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-telegram-bot-api-secret-token': env.HOOK_C_SECRET,
          },
          body: JSON.stringify(update),
        });
        expect(res.status).toBe(202);
        expect(await res.json()).toMatchObject({ status: 'queued' });
        sent.push({ bot: HOOK.id, updateId, chat, kind });
      }
      expect(sent).toHaveLength(TOTAL);

      // A resend of a webhook update (Telegram retrying) is a duplicate on either ingress.
      const again = await fetch(`${ingress2.url}/webhooks/telegram/${HOOK.id}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-telegram-bot-api-secret-token': env.HOOK_C_SECRET,
        },
        body: JSON.stringify({
          update_id: 900_000,
          message: { message_id: 1, chat: { id: 5000, type: 'private' }, date: 0, text: 'again' },
        }),
      });
      expect(await again.json()).toEqual({ status: 'duplicate', deliveries: 0 });

      // Gateway calls from both gateways reach Telegram.
      const gatewayCalls = await Promise.all(
        [gateway1, gateway2].flatMap((gateway) =>
          [POLL_A.id, HOOK.id].flatMap((bot) =>
            Array.from({ length: 10 }, async (_, n) => {
              const text = `${gateway.name} ${bot} #${n}`;
              const res = await fetch(`${gateway.url}/api/v1/${bot}/messages/send`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'x-service-token': env.SITE_TOKEN },
                // A chat per call: twenty at once to one chat are more than outbound
                // pacing lets through within max_wait (1 per second per chat).
                body: JSON.stringify({ chat_id: 42_000 + n, text }),
              });
              // The answer's body says why when it is not a 200.
              expect(`${res.status} ${await res.text()}`).toMatch(/^200 /);
              return text;
            }),
          ),
        ),
      );
      const arrived = new Set(
        [POLL_A.id, HOOK.id].flatMap((bot) =>
          emulator.sent(bots[bot].id, { method: 'sendMessage' }).map((c) => String(c.params.text)),
        ),
      );
      expect(gatewayCalls.filter((text) => !arrived.has(text))).toEqual([]);
      expect(gatewayCalls.filter((t) => t.startsWith('gateway-1'))).toHaveLength(20);
      expect(gatewayCalls.filter((t) => t.startsWith('gateway-2'))).toHaveLength(20);

      // Every update reaches every route it matches.
      const expected = new Map<string, Set<string>>();
      for (const u of sent) {
        for (const route of routesOf(u)) {
          const set = expected.get(route) ?? new Set<string>();
          set.add(keyOf(u.bot, u.updateId));
          expected.set(route, set);
        }
      }
      const expectedTotal = [...expected.values()].reduce((sum, set) => sum + set.size, 0);
      const delivered = (route: string) =>
        receiver.deliveries.filter((d) => d.path === `/${route}` && d.status === 204);
      const keyOfDelivery = (d: Delivery) =>
        keyOf(d.headers['x-relaygram-bot'], Number(d.headers['x-telegram-update-id']));
      const distinct = () =>
        [...expected.keys()].reduce(
          (sum, route) => sum + new Set(delivered(route).map(keyOfDelivery)).size,
          0,
        );
      await eventually(() => distinct() >= expectedTotal, `${expectedTotal} deliveries`, {
        timeoutMs: 150_000,
        intervalMs: 500,
      });
      for (const [route, keys] of expected) {
        const got = new Set(delivered(route).map(keyOfDelivery));
        expect({ route, missing: [...keys].filter((k) => !got.has(k)).slice(0, 5) }).toEqual({
          route,
          missing: [],
        });
        expect({ route, unexpected: [...got].filter((k) => !keys.has(k)).slice(0, 5) }).toEqual({
          route,
          unexpected: [],
        });
      }

      // In every lane, first arrivals keep the order ingress accepted the updates in.
      const byKey = new Map(sent.map((u) => [keyOf(u.bot, u.updateId), u]));
      for (const route of expected.keys()) {
        const wanted = new Map<string, string[]>();
        for (const u of sent) {
          const lane = routesOf(u).includes(route) ? laneOf(route, u) : undefined;
          if (lane !== undefined)
            wanted.set(lane, [...(wanted.get(lane) ?? []), keyOf(u.bot, u.updateId)]);
        }
        const arrivals = new Map<string, string[]>();
        const seen = new Set<string>();
        for (const d of receiver.deliveries.filter((x) => x.path === `/${route}`)) {
          const key = keyOfDelivery(d);
          if (seen.has(key)) continue;
          seen.add(key);
          const lane = laneOf(route, byKey.get(key)!);
          if (lane !== undefined) arrivals.set(lane, [...(arrivals.get(lane) ?? []), key]);
        }
        for (const [lane, keys] of wanted) {
          expect({ route, lane, order: arrivals.get(lane) }).toEqual({ route, lane, order: keys });
        }
      }

      // Each polling bot was polled, and never by two processes at once.
      for (const spec of [POLL_A, POLL_B]) {
        const polls = taps
          .flatMap((tap) => tap.polls)
          .filter((p) => p.bot === bots[spec.id].id)
          .sort((a, b) => a.start - b.start);
        expect(polls.length).toBeGreaterThan(0);
        for (let i = 1; i < polls.length; i++) {
          if (polls[i].tap !== polls[i - 1].tap) {
            expect({ bot: spec.id, overlap: polls[i - 1].end > polls[i].start }).toEqual({
              bot: spec.id,
              overlap: false,
            });
          }
        }
        expect(polls.filter((p) => p.status === 409)).toEqual([]);
      }

      // Every dispatcher took a share of the deliveries.
      for (const dispatcher of apps.filter((app) => app.name.startsWith('dispatcher'))) {
        const text = await (await fetch(`${dispatcher.adminUrl}/metrics`)).text();
        const done = text
          .split('\n')
          .filter(
            (line) =>
              line.startsWith('relaygram_deliveries_total{') &&
              line.includes('outcome="delivered"'),
          )
          .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
        expect({ dispatcher: dispatcher.name, delivered: done > 0 }).toEqual({
          dispatcher: dispatcher.name,
          delivered: true,
        });
      }

      for (const app of apps.splice(0))
        expect({ app: app.name, code: await app.stop() }).toEqual({ app: app.name, code: 0 });
    } catch (error) {
      for (const app of apps) {
        process.stderr.write(
          `--- ${app.name} (${app.running ? 'running' : 'exited'})\n${app.output().slice(-3000)}\n`,
        );
      }
      throw error;
    }
  }, 180_000);
});
