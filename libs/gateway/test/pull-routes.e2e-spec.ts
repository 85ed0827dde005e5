import { loadConfigOrThrow } from '@relaygram/config';
import { DeadReason } from '@relaygram/contracts';
import {
  createRedis,
  DeadLetterStore,
  DrainScheduler,
  laneResolverFor,
  newDeliveryId,
  pullLaneId,
  queueContext,
  UpdateEnqueuer,
  waitForRedis,
  type RelaygramRedis,
} from '@relaygram/queue';
import type { RunningApp } from '@relaygram/platform';
import { redisUrl, tcpConnectionsTo } from '@relaygram/testing';
import { request } from 'undici';
import { clientToken, startGatewayHarness, type GatewayHarness } from './gateway-harness';

const LAPTOP_TOKEN = clientToken();
/** Clients with a pull route each, so that many calls can wait at once. */
const FLEET = Array.from({ length: 20 }, (_, i) => ({ name: `fleet-${i}`, token: clientToken() }));
const CONFLICT = {
  ok: false,
  error_code: 409,
  description:
    'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
};
const RESERVED = { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' };

interface Answer {
  status: number;
  text: string;
  json: unknown;
}

/** The Bot API, Telegram's way: getUpdates and friends on the drop-in. */
describe('pull routes: getUpdates on the drop-in', () => {
  let h: GatewayHarness;
  let redis: RelaygramRedis;
  let scheduler: DrainScheduler;
  let enqueuer: UpdateEnqueuer;
  let dead: DeadLetterStore;
  let nextId = 1000;

  beforeAll(async () => {
    h = await startGatewayHarness({
      routes: [
        '  - name: laptop',
        '    bots: [main-bot]',
        '    pull: { client: laptop }',
        '    retry: { max_age: 1h }',
        ...FLEET.map(
          (c) => `  - { name: ${c.name}, bots: [main-bot], pull: { client: ${c.name} } }`,
        ),
      ],
      clients: [
        '  - name: laptop',
        '    token_env: GW_LAPTOP_TOKEN',
        '    bots: [main-bot, other-bot]',
        '    methods: [sendMessage]',
        ...FLEET.map(
          (c, i) => `  - { name: ${c.name}, token_env: GW_FLEET_${i}, bots: [main-bot] }`,
        ),
      ],
      env: {
        GW_LAPTOP_TOKEN: LAPTOP_TOKEN,
        ...Object.fromEntries(FLEET.map((c, i) => [`GW_FLEET_${i}`, c.token])),
      },
    });
    redis = createRedis(redisUrl(), { connectionName: 'test-pull-enqueue' });
    await waitForRedis(redis);
    const ctx = queueContext(redis, h.prefix);
    scheduler = new DrainScheduler(ctx);
    enqueuer = new UpdateEnqueuer(ctx, scheduler);
    dead = new DeadLetterStore(ctx, scheduler);
  });
  afterAll(async () => {
    await scheduler.close();
    await redis.quit();
    await h.close();
  });

  const deliveryIds = new Map<number, string>();

  /** Accepts an update for the laptop route, as ingress would. */
  async function accept(body: Record<string, unknown> = {}, acceptedAt?: number): Promise<Buffer> {
    const updateId = nextId++;
    const deliveryId = newDeliveryId();
    deliveryIds.set(updateId, deliveryId);
    const bytes = Buffer.from(
      JSON.stringify({
        update_id: updateId,
        message: { message_id: updateId, chat: { id: 7, type: 'private' }, text: `#${updateId}` },
        ...body,
      }),
    );
    await enqueuer.enqueue({
      bot: 'main-bot',
      updateId,
      body: bytes,
      acceptedAt,
      deliveries: [
        {
          route: 'laptop',
          lane: pullLaneId('laptop', 'main-bot'),
          deliveryId,
          pull: true,
        },
      ],
    });
    return bytes;
  }

  async function call(
    method: string,
    params: Record<string, unknown> = {},
    options: { token?: string; app?: RunningApp; via?: 'json' | 'query' | 'form' } = {},
  ): Promise<Answer> {
    const base = `${options.app?.url ?? h.url}/bot${h.main.id}:${options.token ?? LAPTOP_TOKEN}/${method}`;
    const via = options.via ?? 'json';
    const encoded = new URLSearchParams(
      Object.entries(params).map(([k, v]): [string, string] => [
        k,
        typeof v === 'string' ? v : JSON.stringify(v),
      ]),
    ).toString();
    const res =
      via === 'query'
        ? await request(`${base}?${encoded}`)
        : await request(base, {
            method: 'POST',
            headers: {
              'content-type':
                via === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
            },
            body: via === 'json' ? JSON.stringify(params) : encoded,
          });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: JSON.parse(text) as unknown };
  }

  const ids = (answer: Answer) =>
    (answer.json as { result: { update_id: number }[] }).result.map((u) => u.update_id);

  /** Confirms whatever waits, so each test starts on an empty lane. */
  async function drain(): Promise<void> {
    await call('deleteWebhook', { drop_pending_updates: true });
  }

  beforeEach(drain);

  it("answers Telegram's JSON with each update's bytes as received, and serves them again until confirmed", async () => {
    const first = await accept();
    const second = await accept({ message: { text: 'ünïcödé \u2028', chat: { id: 7 } } });
    const answer = await call('getUpdates');
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(`{"ok":true,"result":[${first.toString()},${second.toString()}]}`);
    // Not confirmed: the next call sees them again (at-least-once, like Telegram).
    expect(ids(await call('getUpdates', {}, { via: 'query' }))).toEqual(ids(answer));
    const [, last] = ids(answer);
    expect(ids(await call('getUpdates', { offset: last + 1 }, { via: 'form' }))).toEqual([]);
  });

  it('limit takes 1 to 100 (clamped, default 100) and offset confirms what came before', async () => {
    const accepted = [];
    for (let i = 0; i < 105; i++) accepted.push(JSON.parse((await accept()).toString()).update_id);
    expect(ids(await call('getUpdates', { limit: 3 }))).toEqual(accepted.slice(0, 3));
    expect(ids(await call('getUpdates', { limit: 0 }))).toEqual(accepted.slice(0, 1));
    expect(ids(await call('getUpdates', { limit: 'many' }))).toHaveLength(100);
    expect(ids(await call('getUpdates', { limit: 500 }))).toHaveLength(100);
    expect(ids(await call('getUpdates', { offset: accepted[100], limit: 100 }))).toEqual(
      accepted.slice(100),
    );
  });

  it('a long poll returns as soon as an update arrives, woken through Redis', async () => {
    const started = Date.now();
    const poll = call('getUpdates', { timeout: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const update = await accept();
    const answer = await poll;
    expect(answer.text).toBe(`{"ok":true,"result":[${update.toString()}]}`);
    // Woken by the update, not by the end of its 20 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a long poll with nothing coming answers an empty list when its time is up', async () => {
    expect((await call('getUpdates', { timeout: 1 })).text).toBe('{"ok":true,"result":[]}');
  });

  it('a second getUpdates of the same client and bot ends the waiting one with 409', async () => {
    const first = call('getUpdates', { timeout: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = call('getUpdates', { timeout: 20 });
    const ended = await first;
    expect(ended.status).toBe(409);
    expect(ended.json).toEqual(CONFLICT);
    // The newer call goes on waiting and gets what comes.
    const update = await accept();
    expect((await second).text).toBe(`{"ok":true,"result":[${update.toString()}]}`);
  });

  it('any gateway replica serves any call: wake-ups and 409s cross processes', async () => {
    const replica = await h.startReplica();
    const onReplica = call('getUpdates', { timeout: 20 }, { app: replica });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const update = await accept();
    expect((await onReplica).text).toBe(`{"ok":true,"result":[${update.toString()}]}`);
    const [id] = JSON.parse(`[${update.toString()}]`).map(
      (u: { update_id: number }) => u.update_id,
    );
    const waiting = call('getUpdates', { timeout: 20, offset: id + 1 }, { app: replica });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const takeover = call('getUpdates', { timeout: 1 });
    expect((await waiting).json).toEqual(CONFLICT);
    expect((await takeover).text).toBe('{"ok":true,"result":[]}');
  });

  it('allowed_updates narrows what is returned and is remembered, as getWebhookInfo shows', async () => {
    const message = await accept();
    const callback = await accept({
      message: undefined,
      callback_query: { id: 'q1', from: { id: 7 }, data: 'x' },
    });
    const narrowed = await call('getUpdates', { allowed_updates: ['callback_query'] });
    expect(narrowed.text).toBe(`{"ok":true,"result":[${callback.toString()}]}`);
    expect(message).toBeDefined();
    const info = await call('getWebhookInfo');
    expect(info.json).toEqual({
      ok: true,
      result: {
        url: '',
        has_custom_certificate: false,
        pending_update_count: 1,
        allowed_updates: ['callback_query'],
      },
    });
    // Remembered: a later message is left out without allowed_updates being sent again.
    await accept();
    expect(ids(await call('getUpdates'))).toEqual(ids(narrowed));
    // [] goes back to Telegram's default, which has messages.
    const again = await accept();
    expect(ids(await call('getUpdates', { allowed_updates: [] }))).toEqual([
      ...ids(narrowed),
      JSON.parse(again.toString()).update_id,
    ]);
  });

  it('deleteWebhook and getWebhookInfo answer as for a bot without a webhook', async () => {
    await accept();
    await accept();
    const info = await call('getWebhookInfo', {}, { via: 'query' });
    expect(info.text).toBe(
      '{"ok":true,"result":{"url":"","has_custom_certificate":false,"pending_update_count":2}}',
    );
    const deleted = await call('deleteWebhook');
    expect(deleted.text).toBe(
      '{"ok":true,"result":true,"description":"Webhook is already deleted"}',
    );
    // Without drop_pending_updates nothing is lost; with it, this client's updates are confirmed.
    expect(ids(await call('getUpdates'))).toHaveLength(2);
    await call('deleteWebhook', { drop_pending_updates: true });
    expect((await call('getWebhookInfo')).json).toMatchObject({
      result: { pending_update_count: 0 },
    });
    // The real bot's webhook was never touched.
    expect(h.emulator.calls(h.main.id, { method: 'deleteWebhook' })).toEqual([]);
    expect(h.emulator.calls(h.main.id, { method: 'getUpdates' })).toEqual([]);
  });

  it('keeps the reserved-method 403 for clients without a pull route on that bot', async () => {
    // site may use main-bot but owns no pull route; laptop owns none on other-bot.
    expect((await call('getUpdates', {}, { token: h.siteToken })).json).toEqual(RESERVED);
    expect((await call('deleteWebhook', {}, { token: h.siteToken })).json).toEqual(RESERVED);
    const onOther = await request(`${h.url}/bot${h.other.id}:${LAPTOP_TOKEN}/getUpdates`);
    expect(onOther.statusCode).toBe(403);
    expect(await onOther.body.json()).toEqual(RESERVED);
    for (const method of ['setWebhook', 'logOut', 'close']) {
      const answer = await call(method, { url: 'https://example.com/hook' });
      expect({ method, status: answer.status, body: answer.json }).toEqual({
        method,
        status: 403,
        body: RESERVED,
      });
    }
    // A wrong token still learns nothing.
    expect((await call('getUpdates', {}, { token: 'x'.repeat(24) })).status).toBe(401);
  });

  it('an update not confirmed within max_age goes dead as expired; a re-send puts it back for the client', async () => {
    const old = await accept({}, Date.now() - 2 * 3600_000);
    const fresh = await accept();
    expect((await call('getUpdates')).text).toBe(`{"ok":true,"result":[${fresh.toString()}]}`);
    const oldId = (JSON.parse(old.toString()) as { update_id: number }).update_id;
    const deliveryId = deliveryIds.get(oldId) as string;
    expect(await dead.get(deliveryId)).toMatchObject({
      reason: DeadReason.Expired,
      route: 'laptop',
      bot: 'main-bot',
    });
    // Re-sent the way the admin API does, with the running config deciding the lane.
    const config = loadConfigOrThrow({ path: h.configPath, env: h.env });
    expect(await dead.replay(deliveryId, laneResolverFor(config))).toBe('queued');
    expect((await call('getUpdates')).text).toBe(
      `{"ok":true,"result":[${fresh.toString()},${old.toString()}]}`,
    );
  });

  it('reads multipart parameters, as aiogram sends them', async () => {
    const update = await accept();
    const boundary = 'aiogram-boundary';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const res = await request(`${h.url}/bot${h.main.id}:${LAPTOP_TOKEN}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `${part('limit', '1')}${part('timeout', '0')}${part('allowed_updates', '["message"]')}--${boundary}--\r\n`,
    });
    expect(await res.body.text()).toBe(`{"ok":true,"result":[${update.toString()}]}`);
  });

  it('counts updates served and confirmed and the calls ended with 409, by route', async () => {
    const metric = async (name: string) => {
      const text = await (await request(`${h.running.adminUrl}/metrics`)).body.text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`${name}{`) && l.includes('route="laptop"'));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    const [served, confirmed, conflicts] = await Promise.all([
      metric('relaygram_pull_served_total'),
      metric('relaygram_pull_confirmed_total'),
      metric('relaygram_pull_conflicts_total'),
    ]);
    await accept();
    await accept();
    const [, last] = ids(await call('getUpdates'));
    expect(ids(await call('getUpdates', { offset: last }))).toEqual([last]);
    const waiting = call('getUpdates', { timeout: 20, offset: last + 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await call('getUpdates');
    expect((await waiting).status).toBe(409);
    expect(await metric('relaygram_pull_served_total')).toBe(served + 3);
    expect(await metric('relaygram_pull_confirmed_total')).toBe(confirmed + 2);
    expect(await metric('relaygram_pull_conflicts_total')).toBe(conflicts + 1);
  });

  it('holds no Redis connection per waiting call: a fixed few per process', async () => {
    // This process's own sockets: the app runs in it, and other test files run elsewhere.
    const redisPort = Number(new URL(redisUrl()).port || 6379);
    const connections = () => tcpConnectionsTo(process.pid, redisPort);
    // The subscriber exists once a first call has waited.
    await call('getUpdates', { timeout: 1 });
    const before = connections();
    expect(before).toBeGreaterThan(0);
    const waits = FLEET.map((c) => call('getUpdates', { timeout: 3 }, { token: c.token }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(connections()).toBe(before);
    // Every one of them was still waiting, on a lane of its own.
    for (const answer of await Promise.all(waits))
      expect(answer.text).toBe('{"ok":true,"result":[]}');
  });
});
