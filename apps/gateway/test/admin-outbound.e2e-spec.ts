import { randomBytes } from 'node:crypto';
import type { RunningApp } from '@relaygram/platform';
import {
  findChromium,
  HEADLESS_CHROMIUM_ARGS,
  TelegramEmulator,
  type BotIdentity,
  expectDocumentedAnswer,
} from '@relaygram/testing';
import { chromium, type Browser } from 'playwright-core';
import { request } from 'undici';
import { bootGateway, type GatewayApp } from './support/gateway-app';

const CHROMIUM = findChromium();
/** Outside CI a machine without a browser skips the page check (CI installs Chromium). */
const withBrowser = CHROMIUM || process.env.CI === 'true' ? it : it.skip;
const ADMIN_TOKEN = 'outbound-admin-token-0123456789';

interface OutboundView {
  pacing: string;
  per_second: number;
  per_chat_per_second: number;
  chat_burst: number;
  per_group_per_minute: number;
  max_wait_ms: number;
  broadcast_share: number;
  pause: { until: string; retry_after: number } | null;
  paused_chats: { chat: string; until: string; retry_after: number }[];
  paused_chats_total: number;
}

/** The admin API and page show each bot's send budgets and the pauses Telegram set. */
describe('outbound budgets and pauses on the admin page', () => {
  let emulator: TelegramEmulator;
  let bot: BotIdentity;
  let running: RunningApp;
  let app: GatewayApp;
  const client = randomBytes(24).toString('base64url');
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    bot = emulator.addBot();
    app = await bootGateway(
      'gw-admin',
      {
        bots: [
          {
            id: 'shop-bot',
            token_env: 'OUT_BOT_TOKEN',
            mode: 'polling',
            outbound: {
              per_second: 25,
              per_chat_per_second: 2,
              chat_burst: 4,
              per_group_per_minute: 15,
              max_wait: '3s',
              broadcast_share: 0.5,
            },
          },
        ],
        routes: [],
        clients: [{ name: 'site', token_env: 'OUT_CLIENT_TOKEN', bots: ['shop-bot'] }],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        OUT_BOT_TOKEN: bot.token,
        OUT_CLIENT_TOKEN: client,
        ADMIN_TOKEN,
      },
    );
    running = app.running;
  });

  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  async function outbound(): Promise<OutboundView> {
    const url = `${running.adminUrl}/admin/api/bots/shop-bot`;
    const res = await request(url, { headers: admin });
    expect(res.statusCode).toBe(200);
    const body = await res.body.json();
    const contentType = String(res.headers['content-type']);
    await expectDocumentedAnswer({ method: 'GET', url, status: 200, contentType, body });
    return (body as { outbound: OutboundView }).outbound;
  }

  it('shows the budgets, and a chat paused by a Telegram 429 with its chat id and time left', async () => {
    expect(await outbound()).toEqual({
      pacing: 'shared',
      per_second: 25,
      per_chat_per_second: 2,
      chat_burst: 4,
      per_group_per_minute: 15,
      max_wait_ms: 3000,
      broadcast_share: 0.5,
      pause: null,
      paused_chats: [],
      paused_chats_total: 0,
    });
    emulator.failTooManyRequests(bot.id, 40, 'sendMessage', 1);
    const res = await request(`${running.url}/api/v1/shop-bot/messages/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-token': client },
      body: JSON.stringify({ chat_id: 4242, text: 'too many' }),
    });
    expect(res.statusCode).toBe(502);
    await expectDocumentedAnswer({
      method: 'POST',
      url: `${running.url}/api/v1/shop-bot/messages/send`,
      status: res.statusCode,
      contentType: String(res.headers['content-type']),
      body: await res.body.json(),
    });
    const view = await outbound();
    expect(view.pause).toBeNull();
    expect(view.paused_chats_total).toBe(1);
    expect(view.paused_chats).toEqual([
      { chat: '4242', until: expect.any(String), retry_after: expect.any(Number) },
    ]);
    expect(view.paused_chats[0]!.retry_after).toBeGreaterThan(35);
    // /healthz, which needs no token, shows the count, never a chat id.
    const health = await request(`${running.url}/healthz`);
    const text = await health.body.text();
    expect(text).toContain('"paused_chats":1');
    expect(text).not.toContain('4242');
  });

  withBrowser('shows them on the page', async () => {
    if (!CHROMIUM) {
      throw new Error('no Chromium or Chrome found: set CHROME_PATH, or install Chromium');
    }
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: HEADLESS_CHROMIUM_ARGS,
      });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${running.adminUrl}/admin`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.click('#login-form button[type=submit]');
      const card = '#bots .bot[data-id="shop-bot"] .outbound';
      await page.waitForSelector(card);
      const text = (await page.textContent(card)) ?? '';
      expect(text).toContain('Outbound pacing');
      expect(text).toContain('shared');
      expect(text).toContain('2 / s, burst 4');
      expect(text).toContain('15 / min');
      expect(text).toContain('3 s');
      expect(text).toContain('chat 4242');
      expect(errors).toEqual([]);
    } finally {
      await browser?.close();
    }
  });
});
