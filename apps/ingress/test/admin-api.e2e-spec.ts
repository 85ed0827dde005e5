import { DeadReason } from '@relaygram/contracts';
import type { RunningApp } from '@relaygram/platform';
import {
  expectDocumentedAnswer,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  webhookBot,
  writeEmulatedConfig,
} from '@relaygram/testing';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { request } from 'undici';
import { bootIngress, makeDeadLetter, messageUpdate, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'admin-token-for-the-api-test-0123456789';
const WEBHOOK_SECRET = 'shop_webhook_secret_0123456789';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  options: { token?: string; authorization?: string; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  let body: Record<string, unknown> = {};
  let json = true;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
    json = false;
  }
  const type = res.headers['content-type'];
  const contentType = json && typeof type === 'string' ? type : 'text/plain';
  await expectDocumentedAnswer({ method, url, status: res.statusCode, contentType, body });
  return { status: res.statusCode, body, headers: res.headers };
}

describe('admin API (ingress app)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let shop: BotIdentity;
  let support: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  let store: QueueFixture;

  const api = (path: string) => `${app.adminUrl}/admin/api${path}`;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    shop = emulator.addBot({ username: 'shop_test_bot' });
    support = emulator.addBot({ username: 'support_test_bot' });
    prefix = uniquePrefix('admin-api');
    config = writeEmulatedConfig(prefix, emulator.apiRoot, {
      bots: [
        // The test sets the webhook through the admin API, not at start.
        webhookBot('shop', 'SHOP_WEBHOOK_SECRET', { manage: false, max_connections: 10 }),
        webhookBot('support', 'SUPPORT_WEBHOOK_SECRET', { manage: false }),
      ],
      routes: [
        { name: 'orders', bots: ['shop'], target_url: `${receiver.url}/orders?key=k` },
        { name: 'helpdesk', bots: ['support'], target_url: `${receiver.url}/helpdesk` },
      ],
      clients: [],
    });
    app = await bootIngress(config.path, {
      ADMIN_TOKEN,
      SHOP_TOKEN: shop.token,
      SUPPORT_TOKEN: support.token,
      SHOP_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SUPPORT_WEBHOOK_SECRET: 'support_webhook_secret_0123',
    });
    store = await createQueueFixture('admin-api', prefix);
  });

  afterAll(async () => {
    await app?.close();
    await store?.cleanup();
    await receiver?.stop();
    await emulator?.stop();
    config?.cleanup();
  });

  describe('access', () => {
    it('serves /admin, /admin/api and /metrics on the management listener only', async () => {
      for (const path of ['/admin', '/admin/api', '/metrics', '/admin/assets/admin.js']) {
        const pub = await call('GET', `${app.url}${path}`, { token: ADMIN_TOKEN });
        expect({ path, status: pub.status }).toEqual({ path, status: 404 });
      }
      expect((await call('GET', `${app.adminUrl}/admin`)).status).toBe(200);
      expect((await call('GET', api(''), { token: ADMIN_TOKEN })).status).toBe(200);
      expect((await call('GET', `${app.adminUrl}/metrics`)).status).toBe(200);
    });

    it('answers 401 without a token or with a wrong one, and 200 with the right one', async () => {
      const missing = await call('GET', api('/bots'));
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ error: 'unauthorized' });
      expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);

      expect((await call('GET', api('/bots'), { token: 'wrong' })).status).toBe(401);
      expect((await call('GET', api('/bots'), { token: `${ADMIN_TOKEN}x` })).status).toBe(401);
      const basic = await call('GET', api('/bots'), { authorization: `Basic ${ADMIN_TOKEN}` });
      expect(basic.status).toBe(401);

      const ok = await call('GET', api('/bots'), { token: ADMIN_TOKEN });
      expect(ok.status).toBe(200);
      expect(ok.headers['cache-control']).toBe('no-store');
    });

    it('checks the token before telling whether an admin path exists', async () => {
      expect((await call('GET', api('/no-such-thing'))).status).toBe(401);
      const unknown = await call('GET', api('/no-such-thing'), { token: ADMIN_TOKEN });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'no such admin API endpoint' });
    });

    it('gives the page its filter names', async () => {
      const overview = await call('GET', api(''), { token: ADMIN_TOKEN });
      expect(overview.body).toEqual({
        service: 'ingress',
        bots: ['shop', 'support'],
        routes: ['orders', 'helpdesk'],
        dead_reasons: ['rejected', 'poison', 'expired', 'route_removed'],
      });
    });
  });

  describe('bots and routes', () => {
    it('lists every bot with health, counts and webhook fields', async () => {
      const { body } = await call('GET', api('/bots'), { token: ADMIN_TOKEN });
      const bots = body.bots as Record<string, unknown>[];
      expect(bots.map((b) => b.id)).toEqual(['shop', 'support']);
      expect(bots[0]).toMatchObject({
        id: 'shop',
        mode: 'webhook',
        polling: false,
        queue: expect.any(Number),
        dead: expect.any(Number),
        default: false,
        allowed_updates: ['message', 'callback_query'],
        webhook: { expected_url: 'https://relay.example.com/webhooks/telegram/shop' },
      });
      expect(JSON.stringify(body)).not.toContain(shop.token);
    });

    it('answers 404 naming an unknown bot or route', async () => {
      const bot = await call('GET', api('/bots/nope'), { token: ADMIN_TOKEN });
      expect(bot).toMatchObject({ status: 404, body: { error: 'unknown bot: nope' } });
      const route = await call('GET', api('/routes/nope'), { token: ADMIN_TOKEN });
      expect(route).toMatchObject({ status: 404, body: { error: 'unknown route: nope' } });
    });

    it('sets the webhook with the configured URL and secret, keeping pending updates', async () => {
      emulator.message(shop.token, { chatId: 5, text: 'waiting at Telegram' });
      const set = await call('POST', api('/bots/shop/webhook'), { token: ADMIN_TOKEN });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({
        status: 'set',
        bot: 'shop',
        expected_url: 'https://relay.example.com/webhooks/telegram/shop',
        webhook: { url: 'https://relay.example.com/webhooks/telegram/shop', max_connections: 10 },
      });
      const [setCall] = emulator.calls(shop.token, { method: 'setWebhook' });
      expect(setCall.params).toMatchObject({
        url: 'https://relay.example.com/webhooks/telegram/shop',
        secret_token: WEBHOOK_SECRET,
        max_connections: 10,
        drop_pending_updates: false,
        allowed_updates: ['message', 'callback_query'],
      });
      expect(JSON.stringify(set.body)).not.toContain(WEBHOOK_SECRET);

      const info = await call('GET', api('/bots/shop/webhook'), { token: ADMIN_TOKEN });
      expect(info.status).toBe(200);
      expect(info.body.webhook).toMatchObject({
        url: 'https://relay.example.com/webhooks/telegram/shop',
        pending_update_count: 1,
      });
      // The emulator really tries relay.example.com; a failure it records is shown as it is.
      if (info.body.problem !== undefined) expect(info.body.problem).toMatch(/1 pending/);
    });

    it('shows a webhook that points elsewhere as a problem', async () => {
      const info = await call('GET', api('/bots/support/webhook'), { token: ADMIN_TOKEN });
      expect(info.status).toBe(200);
      expect(info.body.problem).toMatch(/no webhook is set at Telegram/);
    });

    it('passes Telegram errors on as 502 with the error code', async () => {
      emulator.failUnauthorized(support.token, 1);
      const failed = await call('GET', api('/bots/support/webhook'), { token: ADMIN_TOKEN });
      expect(failed.status).toBe(502);
      expect(failed.body).toEqual({ error: 'ETELEGRAM: 401 Unauthorized', error_code: 401 });
    });

    it('shows route queue depth, lanes, dead letters and a target without its query', async () => {
      await makeDeadLetter(store, 'support', 'helpdesk', messageUpdate(9001, 77, 'dead'));
      const { body } = await call('GET', api('/routes/helpdesk'), { token: ADMIN_TOKEN });
      expect(body).toMatchObject({
        name: 'helpdesk',
        bots: ['support'],
        target: `${receiver.url}/helpdesk`,
        ordering: 'chat',
        dead: 1,
        dead_total: 1,
        delivered: 0,
        last_status: null,
      });
      const orders = await call('GET', api('/routes/orders'), { token: ADMIN_TOKEN });
      expect(orders.body.target).toBe(`${receiver.url}/orders?…`);
    });
  });

  describe('dead letters', () => {
    const ids: string[] = [];

    beforeAll(async () => {
      for (let i = 0; i < 5; i++) {
        ids.push(
          await makeDeadLetter(
            store,
            'shop',
            'orders',
            messageUpdate(100 + i, 10 + i, `order ${i}`),
            i === 4 ? DeadReason.Poison : DeadReason.Rejected,
          ),
        );
      }
    });

    it('lists newest first with filters and pages', async () => {
      const first = await call('GET', api('/dead-letters?route=orders&limit=2'), {
        token: ADMIN_TOKEN,
      });
      expect(first.status).toBe(200);
      const items = first.body.items as Record<string, unknown>[];
      expect(items.map((i) => i.delivery_id)).toEqual([ids[4], ids[3]]);
      expect(items[1]).toMatchObject({
        route: 'orders',
        bot: 'shop',
        update_id: 103,
        update_type: 'message',
        reason: 'rejected',
        attempts: 1,
        last_status: 400,
        last_body: '{"error":"bad update"}',
        update: { update_id: 103, message: { text: 'order 3' } },
      });
      expect(first.body.next_cursor).toEqual(expect.any(String));

      const seen = [...items.map((i) => i.delivery_id)];
      let cursor = first.body.next_cursor as string | null;
      while (cursor) {
        const page = await call(
          'GET',
          api(`/dead-letters?route=orders&limit=2&cursor=${encodeURIComponent(cursor)}`),
          { token: ADMIN_TOKEN },
        );
        seen.push(...(page.body.items as Record<string, unknown>[]).map((i) => i.delivery_id));
        cursor = page.body.next_cursor as string | null;
      }
      expect(seen).toEqual([...ids].reverse());

      const poison = await call('GET', api('/dead-letters?reason=poison'), { token: ADMIN_TOKEN });
      expect((poison.body.items as Record<string, unknown>[]).map((i) => i.delivery_id)).toEqual([
        ids[4],
      ]);
      const byBot = await call('GET', api('/dead-letters?bot=support'), { token: ADMIN_TOKEN });
      expect((byBot.body.items as unknown[]).length).toBe(1);
    });

    it('answers 400 naming the bad parameter', async () => {
      const cases: [string, string][] = [
        ['limit=0', 'limit'],
        ['limit=501', 'limit'],
        ['limit=ten', 'limit'],
        ['reason=lost', 'reason'],
        ['route=Not_A_Name', 'route'],
        ['bot=a&bot=b', 'bot'],
        ['cursor=yesterday', 'cursor'],
      ];
      for (const [query, parameter] of cases) {
        const res = await call('GET', api(`/dead-letters?${query}`), { token: ADMIN_TOKEN });
        expect({ query, status: res.status, parameter: res.body.parameter }).toEqual({
          query,
          status: 400,
          parameter,
        });
        expect(res.body.error).toMatch(new RegExp(`^${parameter}: `));
      }
    });

    it('shows one dead letter and answers 404 for an unknown id', async () => {
      const one = await call('GET', api(`/dead-letters/${ids[0]}`), { token: ADMIN_TOKEN });
      expect(one.body).toMatchObject({ delivery_id: ids[0], update_id: 100 });
      const unknown = await call('GET', api('/dead-letters/0000-none'), { token: ADMIN_TOKEN });
      expect(unknown).toMatchObject({
        status: 404,
        body: { error: 'unknown dead letter: 0000-none' },
      });
      const replay = await call('POST', api('/dead-letters/0000-none/replay'), {
        token: ADMIN_TOKEN,
      });
      expect(replay.status).toBe(404);
      expect(
        (await call('DELETE', api('/dead-letters/0000-none'), { token: ADMIN_TOKEN })).status,
      ).toBe(404);
    });

    it('re-sends one dead letter to the tail of its lane', async () => {
      const before = await call('GET', api('/routes/orders'), { token: ADMIN_TOKEN });
      const res = await call('POST', api(`/dead-letters/${ids[0]}/replay`), {
        token: ADMIN_TOKEN,
      });
      expect(res).toMatchObject({ status: 200, body: { status: 'queued', delivery_id: ids[0] } });
      expect(
        (await call('GET', api(`/dead-letters/${ids[0]}`), { token: ADMIN_TOKEN })).status,
      ).toBe(404);
      const after = await call('GET', api('/routes/orders'), { token: ADMIN_TOKEN });
      expect(after.body.queue).toBe((before.body.queue as number) + 1);
      expect(after.body.dead).toBe((before.body.dead as number) - 1);
    });

    it('re-sends all dead letters of a route and refuses a re-send without a filter', async () => {
      const refused = await call('POST', api('/dead-letters/replay'), {
        token: ADMIN_TOKEN,
        body: {},
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/^route or bot/);

      const bad = await call('POST', api('/dead-letters/replay'), {
        token: ADMIN_TOKEN,
        body: { route: 42 },
      });
      expect(bad).toMatchObject({ status: 400, body: { parameter: 'route' } });

      const res = await call('POST', api('/dead-letters/replay'), {
        token: ADMIN_TOKEN,
        body: { route: 'orders', reason: 'rejected' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'done',
        filter: { route: 'orders', reason: 'rejected' },
        queued: 3,
        failed: 0,
      });
      const left = await call('GET', api('/dead-letters?route=orders'), { token: ADMIN_TOKEN });
      expect((left.body.items as Record<string, unknown>[]).map((i) => i.delivery_id)).toEqual([
        ids[4],
      ]);
    });

    it('deletes a dead letter', async () => {
      const res = await call('DELETE', api(`/dead-letters/${ids[4]}`), { token: ADMIN_TOKEN });
      expect(res).toMatchObject({ status: 200, body: { status: 'deleted', delivery_id: ids[4] } });
      expect(
        (await call('GET', api(`/dead-letters/${ids[4]}`), { token: ADMIN_TOKEN })).status,
      ).toBe(404);
    });

    it('refuses to re-send a dead letter of a route no longer configured', async () => {
      const orphan = await makeDeadLetter(store, 'shop', 'retired', messageUpdate(500, 5, 'old'));
      const res = await call('POST', api(`/dead-letters/${orphan}/replay`), {
        token: ADMIN_TOKEN,
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(/retired/);
      expect(
        (await call('GET', api(`/dead-letters/${orphan}`), { token: ADMIN_TOKEN })).status,
      ).toBe(200);
    });
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  let app: RunningApp;
  let config: ReturnType<typeof writeConfig>;

  beforeAll(async () => {
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix: uniquePrefix('admin-off') },
      bots: [],
      routes: [],
      clients: [],
    });
    app = await bootIngress(config.path, { ADMIN_TOKEN: undefined });
  });
  afterAll(async () => {
    await app?.close();
    config?.cleanup();
  });

  it('answers 404 for the page and every API path, token or not', async () => {
    for (const path of ['/admin', '/admin/assets/admin.js', '/admin/api', '/admin/api/bots']) {
      for (const token of [undefined, 'anything']) {
        const res = await call('GET', `${app.adminUrl}${path}`, { token });
        expect({ path, token, status: res.status }).toEqual({ path, token, status: 404 });
      }
    }
    expect((await call('GET', `${app.adminUrl}/metrics`)).status).toBe(200);
  });
});
