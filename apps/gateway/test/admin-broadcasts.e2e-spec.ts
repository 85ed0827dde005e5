import { randomBytes } from 'node:crypto';
import { ConfigService } from '@relaygram/config';
import { BroadcastStore } from '@relaygram/queue';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { TelegramEmulator } from '@relaygram/testing';
import { request } from 'undici';
import {
  adminCall,
  BLOCKED,
  NOT_FOUND,
  seedBroadcast,
  type AdminAnswer,
} from './support/broadcast-seed';
import { bootGateway, type GatewayApp } from './support/gateway-app';

const ADMIN_TOKEN = 'broadcasts-admin-token-0123456789';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Row {
  bot: string;
  id: string;
  status: string;
  [field: string]: unknown;
}

/**
 * The admin API's broadcasts (issue 16) on the gateway app, over HTTP and a real Redis.
 * Broadcasts are seeded through BroadcastStore as the gateway and a dispatcher leave
 * them; no dispatcher runs here, so nothing moves on its own.
 */
describe('admin API: broadcasts', () => {
  let emulator: TelegramEmulator;
  let app: GatewayApp;
  let fixture: QueueFixture;
  let store: BroadcastStore;
  let base: string;

  const get = (path: string, token: string | undefined = ADMIN_TOKEN) =>
    adminCall('GET', `${base}${path}`, token);
  const post = (path: string, token: string | undefined = ADMIN_TOKEN) =>
    adminCall('POST', `${base}${path}`, token);
  const ids = (answer: AdminAnswer) => (answer.body.items as Row[]).map((row) => row.id);
  const statusInRedis = (bot: string, id: string) =>
    fixture.redis.hget(fixture.ctx.keys.broadcast(bot, id), 'status');

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const shop = emulator.addBot();
    const news = emulator.addBot();
    app = await bootGateway(
      'gw-admin-bc',
      {
        bots: [
          { id: 'shop-bot', token_env: 'BC_SHOP_TOKEN', mode: 'polling', default: true },
          { id: 'news-bot', token_env: 'BC_NEWS_TOKEN', mode: 'polling' },
        ],
        routes: [],
        clients: [{ name: 'shop', token_env: 'BC_CLIENT_TOKEN', bots: ['shop-bot', 'news-bot'] }],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        BC_SHOP_TOKEN: shop.token,
        BC_NEWS_TOKEN: news.token,
        BC_CLIENT_TOKEN: randomBytes(24).toString('base64url'),
        ADMIN_TOKEN,
      },
    );
    base = `${app.running.adminUrl}/admin/api`;
    store = app.running.app.get(BroadcastStore);
    const prefix = app.running.app.get(ConfigService).config.redis.prefix;
    fixture = await createQueueFixture('gw-admin-bc', prefix);
  });

  afterAll(async () => {
    await app?.close();
    await fixture?.cleanup();
    await emulator?.stop();
  });

  it("lists every bot's broadcasts newest first, with their progress, one bot's, by pages", async () => {
    const shop = await seedBroadcast(store, {
      bot: 'shop-bot',
      recipients: 10,
      sent: 4,
      blocked: 2,
      failed: 1,
      startedAgoMs: 60_000,
    });
    const news = await seedBroadcast(store, {
      bot: 'news-bot',
      recipients: 5,
      client: 'digest',
      method: 'copyMessage',
      startedAgoMs: 30_000,
    });
    const done = await seedBroadcast(store, {
      bot: 'shop-bot',
      recipients: 3,
      sent: 3,
      startedAgoMs: 90_000,
    });

    const all = await get('/broadcasts');
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual([news, shop, done]);
    expect(all.body.next_offset).toBeNull();
    const [newsRow, shopRow, doneRow] = all.body.items as Row[];
    expect(shopRow).toEqual({
      bot: 'shop-bot',
      client: 'shop',
      id: shop,
      status: 'running',
      method: 'sendMessage',
      total: 10,
      sent: 4,
      blocked: 2,
      failed: 1,
      pending: 3,
      rate: expect.any(Number),
      created_at: expect.stringMatching(ISO_TIME),
      started_at: expect.stringMatching(ISO_TIME),
      estimated_finish_at: expect.stringMatching(ISO_TIME),
    });
    // 7 settled in about a minute of running.
    expect(shopRow.rate).toBeCloseTo(0.1, 1);
    expect(Date.parse(shopRow.estimated_finish_at as string)).toBeGreaterThan(Date.now());
    // Nothing settled yet: no rate, so no estimate.
    expect(newsRow).toMatchObject({ bot: 'news-bot', client: 'digest', method: 'copyMessage' });
    expect(newsRow).toMatchObject({ status: 'running', total: 5, pending: 5, rate: 0 });
    expect(newsRow.estimated_finish_at).toBeUndefined();
    expect(doneRow).toMatchObject({ status: 'done', sent: 3, pending: 0 });
    expect(doneRow.finished_at).toMatch(ISO_TIME);
    expect(doneRow.estimated_finish_at).toBeUndefined();

    expect(ids(await get('/broadcasts?bot=news-bot'))).toEqual([news]);
    expect(ids(await get('/broadcasts?bot=gone-bot'))).toEqual([]);
    const pages: string[][] = [];
    const offsets: unknown[] = [];
    for (let offset = 0; offset < 3; offset++) {
      const page = await get(`/broadcasts?limit=1&offset=${offset}`);
      pages.push(ids(page));
      offsets.push(page.body.next_offset);
    }
    expect(pages).toEqual([[news], [shop], [done]]);
    expect(offsets).toEqual([1, 2, null]);

    const one = await get(`/broadcasts/shop-bot/${shop}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: shop, bot: 'shop-bot', sent: 4, blocked: 2, failed: 1 });
  });

  it('refuses bad list parameters, naming them', async () => {
    for (const [query, parameter] of [
      ['bot=Shop', 'bot'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=10001', 'offset'],
      ['offset=1&offset=2', 'offset'],
    ]) {
      const answer = await get(`/broadcasts?${query}`);
      expect({ query, status: answer.status, parameter: answer.body.parameter }).toEqual({
        query,
        status: 400,
        parameter,
      });
    }
  });

  it('pauses, resumes and cancels, and answers 409 naming the status when not allowed', async () => {
    const id = await seedBroadcast(store, { bot: 'shop-bot', recipients: 8, sent: 2 });
    const path = `/broadcasts/shop-bot/${id}`;

    const paused = await post(`${path}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      bot: 'shop-bot',
      id,
      status: 'paused',
      sent: 2,
      pending: 6,
    });
    expect(paused.body.estimated_finish_at).toBeUndefined();
    expect(await statusInRedis('shop-bot', id)).toBe('paused');
    expect(await store.claim('shop-bot', id, 1)).toEqual({ status: 'paused' });

    const again = await post(`${path}/pause`);
    expect(again).toEqual({
      status: 409,
      body: {
        error: `broadcast ${id} is paused: only a running broadcast can be paused`,
        status: 'paused',
      },
    });

    const resumed = await post(`${path}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('running');
    expect(await statusInRedis('shop-bot', id)).toBe('running');
    expect((await post(`${path}/resume`)).body).toEqual({
      error: `broadcast ${id} is running: only a paused broadcast can be resumed`,
      status: 'running',
    });

    const cancelled = await post(`${path}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', sent: 2, pending: 6 });
    expect(cancelled.body.finished_at).toMatch(ISO_TIME);
    expect(await statusInRedis('shop-bot', id)).toBe('cancelled');
    for (const action of ['pause', 'resume', 'cancel']) {
      const refused = await post(`${path}/${action}`);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatch(new RegExp(`^broadcast ${id} is cancelled: only `));
      expect(refused.body.status).toBe('cancelled');
    }

    const done = await seedBroadcast(store, { bot: 'news-bot', recipients: 1, sent: 1 });
    const late = await post(`/broadcasts/news-bot/${done}/cancel`);
    expect(late.status).toBe(409);
    expect(late.body.error).toBe(
      `broadcast ${done} is done: only a running or paused broadcast can be cancelled`,
    );
  });

  it('answers 404 for a broadcast that does not exist, or could not', async () => {
    const id = await seedBroadcast(store, { bot: 'shop-bot', recipients: 2 });
    for (const path of [
      '/broadcasts/shop-bot/no-such-id',
      `/broadcasts/news-bot/${id}`,
      `/broadcasts/Shop/${id}`,
      '/broadcasts/shop-bot/not%20an%20id',
    ]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['GET', '/failures'],
        ['POST', '/pause'],
        ['POST', '/resume'],
        ['POST', '/cancel'],
      ] as const) {
        const answer = await adminCall(method, `${base}${path}${suffix}`, ADMIN_TOKEN);
        expect({ path, suffix, status: answer.status }).toEqual({ path, suffix, status: 404 });
        expect(answer.body.error).toMatch(/^unknown broadcast: /);
      }
    }
    expect((await get('/broadcasts/shop-bot/no-such-id')).body.error).toBe(
      'unknown broadcast: shop-bot/no-such-id',
    );
    expect(await statusInRedis('shop-bot', id)).toBe('running');
  });

  it('lists the recipients not sent, blocked or failed, with Telegram’s answer, by pages', async () => {
    const id = await seedBroadcast(store, {
      bot: 'shop-bot',
      recipients: 40,
      sent: 5,
      blocked: 25,
      failed: 5,
      firstChat: 7000,
    });
    const path = `/broadcasts/shop-bot/${id}/failures`;

    const first = await get(`${path}?reason=blocked&limit=10`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      bot: 'shop-bot',
      id,
      reason: 'blocked',
      total: 25,
      next_offset: 10,
    });
    const items = first.body.items as { chat_id: string }[];
    expect(items).toHaveLength(10);
    expect(items[0]).toEqual({ chat_id: '7005', error_code: 403, description: BLOCKED });
    expect(items.map((item) => item.chat_id)).toEqual(
      Array.from({ length: 10 }, (_, i) => String(7005 + i)),
    );

    const chats: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await get(`${path}?reason=blocked&limit=10&offset=${offset}`);
      chats.push(...(page.body.items as { chat_id: string }[]).map((item) => item.chat_id));
      offset = page.body.next_offset as number | null;
    }
    expect(chats).toEqual(Array.from({ length: 25 }, (_, i) => String(7005 + i)));

    const failed = await get(`${path}?reason=failed`);
    expect(failed.body).toEqual({
      bot: 'shop-bot',
      id,
      reason: 'failed',
      total: 5,
      next_offset: null,
      items: Array.from({ length: 5 }, (_, i) => ({
        chat_id: String(7030 + i),
        error_code: 400,
        description: NOT_FOUND,
      })),
    });
    // Blocked is the default; past the end is an empty page.
    expect((await get(path)).body).toMatchObject({ reason: 'blocked', total: 25 });
    expect((await get(`${path}?offset=500`)).body).toMatchObject({ items: [], next_offset: null });

    for (const [query, parameter] of [
      ['reason=sent', 'reason'],
      ['offset=x', 'offset'],
      ['limit=0', 'limit'],
    ]) {
      const answer = await get(`${path}?${query}`);
      expect({ query, status: answer.status, parameter: answer.body.parameter }).toEqual({
        query,
        status: 400,
        parameter,
      });
    }
  });

  it('needs the admin token for every call, and changes nothing without it', async () => {
    const id = await seedBroadcast(store, { bot: 'shop-bot', recipients: 3, blocked: 1 });
    const calls = [
      ['GET', '/broadcasts'],
      ['GET', `/broadcasts/shop-bot/${id}`],
      ['GET', `/broadcasts/shop-bot/${id}/failures`],
      ['POST', `/broadcasts/shop-bot/${id}/pause`],
      ['POST', `/broadcasts/shop-bot/${id}/cancel`],
    ] as const;
    for (const [method, path] of calls) {
      for (const token of [undefined, 'not-the-admin-token']) {
        const res = await request(`${base}${path}`, {
          method,
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        const body = await res.body.json();
        expect({ path, status: res.statusCode, body }).toEqual({
          path,
          status: 401,
          body: { error: 'unauthorized' },
        });
        expect(res.headers['www-authenticate']).toBe('Bearer realm="relaygram"');
        expect(res.headers['cache-control']).toBe('no-store');
      }
    }
    expect(await statusInRedis('shop-bot', id)).toBe('running');
  });

  it('documents every broadcasts call in the management OpenAPI document', async () => {
    const res = await request(`${app.running.adminUrl}/admin/openapi.json`);
    const document = (await res.body.json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/api/broadcasts'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
      .sort();
    expect(operations).toEqual([
      'get /admin/api/broadcasts',
      'get /admin/api/broadcasts/{bot}/{id}',
      'get /admin/api/broadcasts/{bot}/{id}/failures',
      'post /admin/api/broadcasts/{bot}/{id}/cancel',
      'post /admin/api/broadcasts/{bot}/{id}/pause',
      'post /admin/api/broadcasts/{bot}/{id}/resume',
    ]);
  });
});
