import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ConfigService } from '@relaygram/config';
import type { RunningApp } from '@relaygram/platform';
import type { AttemptView, UpdateTraceView } from '@relaygram/queue';
import {
  eventually,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
} from '@relaygram/testing';
import { request } from 'undici';
import { stringify } from 'yaml';
import { bootStandalone, getJson, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'delivery-log-test-admin-token-0123456789';
const HOOK_SECRET = randomBytes(24).toString('base64url');
const REFUSAL = 'chat not found; ' + 'y'.repeat(600);
const UPDATE_ID = 500_001;

const message = (updateId: number, chatId: number) => ({
  update_id: updateId,
  message: {
    message_id: updateId,
    date: Math.floor(Date.now() / 1000),
    chat: { id: chatId, type: 'private' },
    from: { id: chatId, is_bot: false, first_name: 'Ada' },
    text: 'hello',
  },
});

/**
 * Issue 19, items 1 and 2: one update fanned out to three routes (one target answers
 * 200, one 503, one 400) is found by its update_id in the admin API with each delivery's
 * state and every attempt with its status and answer; the 503 route's attempts page by
 * page; a repeat and an update no route matches show as such. Real Redis, real HTTP.
 */
describe('the delivery log (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let shop: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let settings: Record<string, unknown>;
  let app: RunningApp;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  const api = (path: string) => getJson(`${app.adminUrl}/admin/api/${path}`, admin);

  async function post(update: object): Promise<number> {
    const res = await request(`${app.url}/webhooks/telegram/shop`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': HOOK_SECRET,
      },
      body: JSON.stringify(update),
    });
    await res.body.dump();
    return res.statusCode;
  }

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith((delivery) => {
      if (delivery.path.startsWith('/fine'))
        return { status: 200, body: 'thanks', headers: { 'content-type': 'text/plain' } };
      if (delivery.path.startsWith('/flaky'))
        return { status: 503, body: 'busy, later', headers: { 'content-type': 'text/plain' } };
      return { status: 400, body: REFUSAL, headers: { 'content-type': 'text/plain' } };
    });
    shop = emulator.addBot({ username: 'shop_log_bot' });
    prefix = uniquePrefix('delivery-log');
    const route = (name: string) => ({
      name,
      bots: ['shop'],
      target_url: `${receiver.url}/${name}`,
      match: { chat_ids: [42] },
      retry: { backoff_cap: '1s' },
    });
    settings = {
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [
        {
          id: 'shop',
          token_env: 'SHOP_TOKEN',
          mode: 'webhook',
          webhook: {
            url: 'https://relay.example/webhooks/telegram/shop',
            secret_token_env: 'HOOK_SECRET',
            manage: false,
          },
        },
      ],
      routes: [route('fine'), route('flaky'), route('broken')],
    };
    config = writeConfig(settings);
    app = await bootStandalone(config.path, {
      ADMIN_TOKEN,
      SHOP_TOKEN: shop.token,
      HOOK_SECRET,
    });
    expect(await post(message(UPDATE_ID, 42))).toBe(202);
  });

  afterAll(() => stopStandalone({ app, receiver, emulator, prefix, config }));

  it('traces the update: delivered, retrying on 503 with its next attempt, dead on 400', async () => {
    const trace = await eventually(
      async () => {
        const { status, body } = await api(`updates/shop/${UPDATE_ID}`);
        expect(status).toBe(200);
        const t = body as unknown as UpdateTraceView;
        const flaky = t.deliveries.find((d) => d.route === 'flaky');
        const done = t.deliveries.filter((d) => d.state === 'delivered' || d.state === 'dead');
        return done.length === 2 && flaky && flaky.attempts.length >= 2 ? t : undefined;
      },
      { what: 'two deliveries settled and two 503s logged', timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(trace).toMatchObject({ bot: 'shop', update_id: UPDATE_ID, status: 'queued' });
    expect(trace.duplicates_at).toEqual([]);
    const byRoute = Object.fromEntries(trace.deliveries.map((d) => [d.route, d]));
    expect(Object.keys(byRoute).sort()).toEqual(['broken', 'fine', 'flaky']);

    expect(byRoute.fine.state).toBe('delivered');
    expect(byRoute.fine.attempts).toHaveLength(1);
    expect(byRoute.fine.attempts[0]).toMatchObject({
      delivery_id: byRoute.fine.delivery_id,
      update_id: UPDATE_ID,
      route: 'fine',
      attempt: 1,
      outcome: 'delivered',
      status: 200,
      error: null,
      body: 'thanks',
      next_attempt_at: null,
    });

    expect(byRoute.flaky.state).toBe('retrying');
    expect(Date.parse(byRoute.flaky.next_attempt_at!)).toBeGreaterThan(
      Date.parse(byRoute.flaky.attempts[0].at),
    );
    byRoute.flaky.attempts.forEach((a, i) => {
      expect(a).toMatchObject({
        attempt: i + 1,
        outcome: 'retry',
        status: 503,
        body: 'busy, later',
      });
      expect(Date.parse(a.next_attempt_at!)).toBeGreaterThanOrEqual(Date.parse(a.at));
    });

    expect(byRoute.broken.state).toBe('dead');
    expect(byRoute.broken.attempts).toHaveLength(1);
    const refused = byRoute.broken.attempts[0];
    expect(refused).toMatchObject({ outcome: 'dead', status: 400, next_attempt_at: null });
    expect(refused.body).toBe(REFUSAL.slice(0, 512));
    for (const d of trace.deliveries) {
      for (const a of d.attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it("pages the 503 route's failed attempts newest first by cursor", async () => {
    await eventually(
      async () => {
        const { body } = await api('routes/flaky/attempts?status=failed');
        return (body.items as AttemptView[]).length >= 3 ? true : undefined;
      },
      { what: 'three attempts on flaky', timeoutMs: 20_000, intervalMs: 200 },
    );
    const first = await api('routes/flaky/attempts?status=failed&limit=2');
    expect(first.status).toBe(200);
    const items = first.body.items as AttemptView[];
    expect(first.body.route).toBe('flaky');
    expect(items).toHaveLength(2);
    expect(items[0].attempt).toBeGreaterThan(items[1].attempt);
    expect(first.body.next_cursor).toBe(items[1].id);
    const second = await api(
      `routes/flaky/attempts?status=failed&limit=2&cursor=${String(first.body.next_cursor)}`,
    );
    const more = second.body.items as AttemptView[];
    expect(more.length).toBeGreaterThanOrEqual(1);
    expect(more[0].attempt).toBe(items[1].attempt - 1);
    expect(more.every((a) => a.status === 503)).toBe(true);

    const delivered = await api('routes/fine/attempts?status=2xx');
    expect((delivered.body.items as AttemptView[]).map((a) => a.status)).toEqual([200]);
    expect((await api('routes/fine/attempts?status=failed')).body.items).toEqual([]);
    const since = new Date(Date.now() + 60_000).toISOString();
    expect((await api(`routes/flaky/attempts?since=${since}`)).body.items).toEqual([]);
    const until = await api(`routes/flaky/attempts?until=${Date.now() + 60_000}`);
    expect((until.body.items as AttemptView[]).length).toBeGreaterThanOrEqual(3);
  });

  it('shows a repeat of the update in duplicates_at, and an update no route matches as ignored', async () => {
    expect(await post(message(UPDATE_ID, 42))).toBe(202);
    expect(await post(message(UPDATE_ID + 1, 99))).toBe(202);
    const { body } = await api(`updates/shop/${UPDATE_ID}`);
    const trace = body as unknown as UpdateTraceView;
    expect(trace.status).toBe('queued');
    expect(trace.duplicates_at).toHaveLength(1);
    expect(Date.parse(trace.duplicates_at[0])).toBeGreaterThan(Date.parse(trace.received_at));
    const ignored = await api(`updates/shop/${UPDATE_ID + 1}`);
    expect(ignored.status).toBe(200);
    expect(ignored.body).toMatchObject({ status: 'ignored', deliveries: [], duplicates_at: [] });
  });

  it('answers 400 for a bad update id or filter, naming it, and 404 for what is unknown', async () => {
    const bad = await api('updates/shop/12ab');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ parameter: 'updateId' });
    expect((await api('updates/shop/-1')).status).toBe(400);

    const unknownBot = await api('updates/nobody/1');
    expect(unknownBot.status).toBe(404);
    expect(unknownBot.body.error).toBe('unknown bot: nobody');
    const notLogged = await api('updates/shop/77');
    expect(notLogged.status).toBe(404);
    expect(notLogged.body.error).toBe(
      'update 77 of bot shop is not in the delivery log: it keeps updates for 1d (delivery_log.max_age) and at most 10000 per bot (delivery_log.updates_per_bot)',
    );

    for (const [query, parameter] of [
      ['status=6xx', 'status'],
      ['since=yesterday', 'since'],
      ['until=-5', 'until'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['cursor=abc', 'cursor'],
    ]) {
      const answer = await api(`routes/flaky/attempts?${query}`);
      expect([query, answer.status, answer.body.parameter]).toEqual([query, 400, parameter]);
    }
    const unknownRoute = await api('routes/nowhere/attempts');
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.body.error).toBe('unknown route: nowhere');
    expect((await getJson(`${app.adminUrl}/admin/api/updates/shop/${UPDATE_ID}`)).status).toBe(401);
  });

  it('records nothing once a reload turns the log off', async () => {
    writeFileSync(config.path, stringify({ ...settings, delivery_log: { enabled: false } }));
    // A reload reads the secrets from the process environment, as SIGHUP does.
    const saved = { SHOP_TOKEN: process.env.SHOP_TOKEN, HOOK_SECRET: process.env.HOOK_SECRET };
    Object.assign(process.env, { SHOP_TOKEN: shop.token, HOOK_SECRET });
    try {
      expect(await app.app.get(ConfigService).reload()).toMatchObject({ ok: true });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const before = await api('routes/fine/attempts');
    const delivered = async () => (await api('routes/fine')).body.delivered as number;
    const count = await delivered();
    expect(await post(message(UPDATE_ID + 2, 42))).toBe(202);
    // The finish script has run once the route counts the delivery: its log entry would be there.
    await eventually(async () => (await delivered()) === count + 1, {
      what: 'the update delivered to fine',
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    const off = await api(`updates/shop/${UPDATE_ID + 2}`);
    expect(off.status).toBe(404);
    expect(off.body.error).toBe(
      `update ${UPDATE_ID + 2} of bot shop is not in the delivery log: it is off (delivery_log.enabled: false)`,
    );
    expect((await api('routes/fine/attempts')).body.items).toEqual(before.body.items);
  });
});
