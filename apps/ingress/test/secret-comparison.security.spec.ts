// The default import is node:crypto itself, the object the signing lib calls into (a
// namespace import would be a copy, and a spy on it would see nothing).
import crypto, { randomBytes } from 'node:crypto';
import type { RunningApp } from '@relaygram/platform';
import { TelegramEmulator } from '@relaygram/testing';
import { request } from 'undici';
import { bootIngress, captureLogs, uniquePrefix, writeConfig } from './admin-kit';

/**
 * SPEC section 6: every secret comparison hashes both sides and compares the digests
 * with timingSafeEqual, against every candidate, without early exit. Here for the two
 * secrets the ingress app checks: the webhook's X-Telegram-Bot-Api-Secret-Token and the
 * admin API's bearer token. A wrong secret differing in its first byte, its last byte,
 * its length, or the right one: each costs the same number of digest comparisons, and
 * at least one (no `===` shortcut decides first).
 */
describe('ingress: secrets are compared as digests, in time independent of the mismatch', () => {
  const webhookSecret = randomBytes(24).toString('base64url');
  const adminToken = randomBytes(24).toString('base64url');
  let emulator: TelegramEmulator;
  let app: RunningApp;
  let config: { path: string; cleanup(): void };
  const logs = captureLogs();
  let compare: jest.SpyInstance;
  let nextId = 1_000;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix: uniquePrefix('secret-cmp') },
      telegram: { api_base: emulator.apiRoot },
      bots: [
        {
          id: 'shop',
          token_env: 'CMP_BOT_TOKEN',
          mode: 'webhook',
          webhook: {
            url: 'https://relay.example/webhooks/telegram/shop',
            secret_token_env: 'CMP_WEBHOOK_SECRET',
            manage: false,
          },
        },
      ],
      routes: [],
      clients: [],
    });
    app = await bootIngress(
      config.path,
      { CMP_BOT_TOKEN: bot.token, CMP_WEBHOOK_SECRET: webhookSecret, ADMIN_TOKEN: adminToken },
      logs,
    );
    compare = jest.spyOn(crypto, 'timingSafeEqual');
  });

  afterAll(async () => {
    compare.mockRestore();
    await app.close();
    await emulator.stop();
    config.cleanup();
  });

  /** Variants of a secret: wrong at the start, at the end, by length, and right. */
  const variants = (secret: string) => ({
    firstByte: `${secret[0] === 'a' ? 'b' : 'a'}${secret.slice(1)}`,
    lastByte: `${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`,
    shorter: secret.slice(0, -1),
    longer: `${secret}a`,
    other: randomBytes(40).toString('base64url'),
    right: secret,
  });

  async function comparisonsFor(
    send: () => Promise<number>,
  ): Promise<{ status: number; calls: number }> {
    compare.mockClear();
    const status = await send();
    return { status, calls: compare.mock.calls.length };
  }

  it('webhook secret header', async () => {
    const results: Record<string, { status: number; calls: number }> = {};
    for (const [name, presented] of Object.entries(variants(webhookSecret))) {
      results[name] = await comparisonsFor(async () => {
        const res = await request(`${app.url}/webhooks/telegram/shop`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-telegram-bot-api-secret-token': presented,
          },
          body: JSON.stringify({ update_id: nextId++, message: { chat: { id: 1 }, text: 'x' } }),
        });
        await res.body.dump();
        return res.statusCode;
      });
    }
    const calls = Object.values(results).map((r) => r.calls);
    expect(calls[0]).toBeGreaterThanOrEqual(1);
    expect(new Set(calls).size).toBe(1);
    expect(results.right?.status).toBe(202);
    for (const name of ['firstByte', 'lastByte', 'shorter', 'longer', 'other']) {
      expect(results[name]?.status).toBe(401);
    }
  });

  it('admin bearer token', async () => {
    const results: Record<string, { status: number; calls: number }> = {};
    for (const [name, presented] of Object.entries(variants(adminToken))) {
      results[name] = await comparisonsFor(async () => {
        const res = await request(`${app.adminUrl}/admin/api`, {
          headers: { authorization: `Bearer ${presented}` },
        });
        await res.body.dump();
        return res.statusCode;
      });
    }
    const calls = Object.values(results).map((r) => r.calls);
    expect(calls[0]).toBeGreaterThanOrEqual(1);
    expect(new Set(calls).size).toBe(1);
    expect(results.right?.status).toBe(200);
    for (const name of ['firstByte', 'lastByte', 'shorter', 'longer', 'other']) {
      expect(results[name]?.status).toBe(401);
    }
  });

  it('admin API: no token, another scheme or header: 401; the public port: 404', async () => {
    const attempts: [string, Record<string, string>][] = [
      [`${app.adminUrl}/admin/api`, {}],
      [`${app.adminUrl}/admin/api`, { authorization: adminToken }],
      [`${app.adminUrl}/admin/api`, { authorization: `Basic ${adminToken}` }],
      [`${app.adminUrl}/admin/api`, { authorization: `Bearer ${adminToken} extra` }],
      [`${app.adminUrl}/admin/api/dead-letters`, { authorization: 'Bearer ' }],
      [`${app.adminUrl}/admin/api/routes`, { 'x-admin-token': adminToken }],
    ];
    for (const [url, headers] of attempts) {
      const res = await request(url, { headers });
      const text = await res.body.text();
      expect(res.statusCode).toBe(401);
      expect(text).not.toContain(adminToken);
    }
    const publicPort = await request(`${app.url}/admin/api`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    await publicPort.body.dump();
    expect(publicPort.statusCode).toBe(404);
  });

  it('webhook: no secret, an empty one, or a wrong one is 401 and nothing is enqueued', async () => {
    for (const headers of [
      {},
      { 'x-telegram-bot-api-secret-token': '' },
      { 'x-telegram-bot-api-secret-token': `${webhookSecret}x` },
      { 'x-telegram-bot-api-secret-token': adminToken },
    ]) {
      const updateId = nextId++;
      const res = await request(`${app.url}/webhooks/telegram/shop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ update_id: updateId, message: { chat: { id: 1 }, text: 'x' } }),
      });
      expect(res.statusCode).toBe(401);
      expect(await res.body.text()).not.toContain(webhookSecret);
      // Sent again properly, the update is new: the refused one left no dedup mark.
      const again = await request(`${app.url}/webhooks/telegram/shop`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-telegram-bot-api-secret-token': webhookSecret,
        },
        body: JSON.stringify({ update_id: updateId, message: { chat: { id: 1 }, text: 'x' } }),
      });
      expect(await again.body.json()).toEqual({ status: 'ignored', deliveries: 0 });
    }
    expect(logs.lines.join('\n')).not.toContain(webhookSecret);
    expect(logs.lines.join('\n')).not.toContain(adminToken);
  });

  it('admin API and webhook: a secret in the query string is not accepted, nor logged', async () => {
    const res = await request(`${app.adminUrl}/admin/api?token=${adminToken}`);
    expect(res.statusCode).toBe(401);
    expect(await res.body.text()).not.toContain(adminToken);
    const hook = await request(
      `${app.url}/webhooks/telegram/shop?secret=${webhookSecret}&token=${encodeURIComponent(adminToken)}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ update_id: nextId++, message: { chat: { id: 1 }, text: 'x' } }),
      },
    );
    expect(hook.statusCode).toBe(401);
    await hook.body.dump();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const text = logs.lines.join('\n');
    expect(text).toContain('?token=***');
    expect(text).toContain('?secret=***&token=***');
    expect(text).not.toContain(adminToken);
    expect(text).not.toContain(webhookSecret);
  });
});
