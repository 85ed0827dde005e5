import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningApp } from '@relaygram/platform';
import {
  describeWithChromium,
  HEADLESS_CHROMIUM_ARGS,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  eventually,
} from '@relaygram/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { request } from 'undici';
import { bootStandalone, getJson, uniquePrefix, writeConfig, stopStandalone } from './admin-kit';

const SCREENSHOTS = join(__dirname, 'screenshots');
const ADMIN_TOKEN = 'page-test-admin-token-0123456789';
const LAPTOP_TOKEN = 'page-test-laptop-client-token-0123';
// Run in the page (this file is compiled without the DOM types).
const STORED_TOKEN = "sessionStorage.getItem('relaygram-admin-token')";
const SIDEWAYS_OVERFLOW =
  'document.documentElement.scrollWidth - document.documentElement.clientWidth';

/**
 * The admin page in a headless Chromium against the standalone process: sign in, find a
 * dead letter, re-send it and see the receiver get it; delete another.
 */
describeWithChromium('admin page in a browser (standalone)', (chromiumPath) => {
  let browser: Browser;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  /** While true the receiver refuses every update with a 400, so each one goes dead. */
  let refusing = true;
  const pageErrors: string[] = [];

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  async function deadLetterOf(text: string): Promise<string> {
    return eventually(
      async () => {
        const { body } = await getJson(`${app.adminUrl}/admin/api/dead-letters?route=site`, admin);
        const items = body.items as {
          delivery_id: string;
          update: { message?: { text?: string } };
        }[];
        return items.find((item) => item.update.message?.text === text)?.delivery_id;
      },
      { what: `the dead letter of "${text}"`, retryErrors: true },
    );
  }

  async function openPage(viewport: { width: number; height: number }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // Chromium reports every 4xx answer as a console error; the 401 test causes one.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
    await page.goto(`${app.adminUrl}/admin`);
    return page;
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.fill('#token', token);
    await page.click('#login-form button[type=submit]');
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: HEADLESS_CHROMIUM_ARGS,
    });
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith(() =>
      refusing ? { status: 400, body: { error: 'cannot take this one' } } : { status: 204 },
    );
    sol = emulator.addBot({ username: 'sol_page_bot' });
    prefix = uniquePrefix('admin-page');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' }],
      routes: [
        { name: 'site', bots: ['sol'], target_url: `${receiver.url}/site` },
        {
          name: 'laptop',
          bots: ['sol'],
          pull: { client: 'laptop' },
          match: { commands: ['/dev'] },
        },
      ],
      clients: [{ name: 'laptop', token_env: 'LAPTOP_TOKEN', bots: ['sol'] }],
    });
    app = await bootStandalone(config.path, {
      ADMIN_TOKEN,
      SOL_TOKEN: sol.token,
      LAPTOP_TOKEN,
    });
  });

  afterAll(async () => {
    await browser?.close();
    await stopStandalone({ app, receiver, emulator, prefix, config });
  });

  it('refuses a wrong token and says so', async () => {
    const page = await openPage({ width: 1024, height: 768 });
    await signIn(page, 'not-the-token');
    await page.waitForSelector('#status.error');
    expect(await page.textContent('#status')).toMatch(/refused/);
    expect(await page.isVisible('#login')).toBe(true);
    expect(await page.evaluate(STORED_TOKEN)).toBeNull();
    await page.close();
  });

  it('signs in, shows a dead letter, re-sends it and the receiver gets it', async () => {
    emulator.message(sol.token, { chatId: 42, text: 'please re-send me' });
    const deliveryId = await deadLetterOf('please re-send me');

    const page = await openPage({ width: 1280, height: 900 });
    await signIn(page, ADMIN_TOKEN);
    await page.waitForSelector('#bots .bot[data-id="sol"]');
    expect(await page.textContent('#service')).toBe('standalone');
    expect(await page.textContent('#bots .bot[data-id="sol"]')).toContain('healthy');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-bots.png'), fullPage: true });

    await page.click('#tab-routes');
    await page.waitForSelector('#routes .route[data-name="site"]');
    expect(await page.textContent('#routes .route[data-name="site"]')).toContain('1 dead');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-routes.png'), fullPage: true });

    await page.click('#tab-queue');
    const card = `#letters .letter[data-id="${deliveryId}"]`;
    await page.waitForSelector(card);
    const text = await page.textContent(card);
    expect(text).toContain('rejected');
    expect(text).toContain('400');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-queue.png'), fullPage: true });

    // The token lives in this tab's sessionStorage, never in the address.
    expect(page.url()).not.toContain(ADMIN_TOKEN);
    expect(await page.evaluate(STORED_TOKEN)).toBe(ADMIN_TOKEN);

    refusing = false;
    await page.click(`${card} button.resend`);
    await page.waitForSelector(card, { state: 'detached' });
    const delivery = await receiver.waitFor(
      (d) => d.headers['x-relaygram-delivery-id'] === deliveryId && d.status === 204,
      { timeoutMs: 10_000 },
    );
    expect((delivery.json as { message: { text: string } }).message.text).toBe('please re-send me');
    // The page reloads the emptied list first, then says what was done.
    // A locator, not waitForFunction: its polls would eval a string, which the page's CSP
    // refuses whenever the text is not there at the first look.
    await page.locator('#status', { hasText: `Re-sent ${deliveryId}` }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-resent.png'), fullPage: true });
    const gone = await getJson(`${app.adminUrl}/admin/api/dead-letters/${deliveryId}`, admin);
    expect(gone.status).toBe(404);
    await page.close();
  });

  it('deletes a dead letter, and reads on a phone without sideways scrolling', async () => {
    refusing = true;
    emulator.message(sol.token, { chatId: 43, text: 'delete me' });
    const deliveryId = await deadLetterOf('delete me');

    const page = await openPage({ width: 390, height: 844 });
    await signIn(page, ADMIN_TOKEN);
    await page.waitForSelector('#app:not([hidden])');
    await page.click('#tab-queue');
    await page.selectOption('#filter-route', 'site');
    await page.click('#filters button[type=submit]');
    const card = `#letters .letter[data-id="${deliveryId}"]`;
    await page.waitForSelector(card);
    const overflow = await page.evaluate<number>(SIDEWAYS_OVERFLOW);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-queue-phone.png'), fullPage: true });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.click(`${card} button.delete`);
    await page.waitForSelector(card, { state: 'detached' });
    const gone = await getJson(`${app.adminUrl}/admin/api/dead-letters/${deliveryId}`, admin);
    expect(gone.status).toBe(404);
    await page.close();
  });

  it("filters the Queue tab to the outbox's failed sends (route _outbox)", async () => {
    refusing = true;
    emulator.message(sol.token, { chatId: 45, text: 'not an outbox send' });
    const siteLetter = await deadLetterOf('not an outbox send');
    emulator.blockChats(sol.token, [4242]);
    const sent = await request(`${app.url}/api/v1/sol/outbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-token': LAPTOP_TOKEN },
      body: JSON.stringify({ method: 'sendMessage', params: { chat_id: 4242, text: 'hi' } }),
    });
    expect(sent.statusCode).toBe(202);
    const { id } = (await sent.body.json()) as { id: string };
    await eventually(
      async () => {
        const { body } = await getJson(`${app.adminUrl}/admin/api/dead-letters/${id}`, admin);
        return body.route === '_outbox' ? true : undefined;
      },
      { what: 'the outbox send to go dead', retryErrors: true },
    );

    const page = await openPage({ width: 1024, height: 768 });
    await signIn(page, ADMIN_TOKEN);
    await page.waitForSelector('#app:not([hidden])');
    await page.click('#tab-queue');
    await page.waitForSelector(`#letters .letter[data-id="${siteLetter}"]`);
    const options = await page.locator('#filter-route option').all();
    expect(await Promise.all(options.map((option) => option.getAttribute('value')))).toEqual([
      '',
      'site',
      '_outbox',
    ]);
    await page.selectOption('#filter-route', '_outbox');
    await page.click('#filters button[type=submit]');
    const card = `#letters .letter[data-id="${id}"]`;
    await page.waitForSelector(card);
    await page.waitForSelector(`#letters .letter[data-id="${siteLetter}"]`, { state: 'detached' });
    const routes = await page.locator('#letters .letter h3').allTextContents();
    expect(routes.every((title) => title.startsWith('_outbox'))).toBe(true);
    expect(await page.textContent(card)).toContain('sendsendMessage to chat 4242');
    expect(await page.textContent(card)).toContain('last status403');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-queue-outbox.png'), fullPage: true });
    emulator.unblockChats(sol.token);
    await page.close();
  }, 60_000);

  it("shows a bot's pull routes with their pending updates and last poll", async () => {
    const page = await openPage({ width: 1024, height: 768 });
    await signIn(page, ADMIN_TOKEN);
    const route = '#bots .bot[data-id="sol"] .pull-routes li[data-route="laptop"]';
    await page.waitForSelector(route);
    expect(await page.textContent(route)).toBe(
      'laptop (client laptop): 0 pending, last polled never ok',
    );

    emulator.message(sol.token, { chatId: 44, text: '/dev wait for me' });
    await eventually(
      async () => {
        const { body } = await getJson(`${app.adminUrl}/admin/api/bots/sol`, {
          authorization: `Bearer ${ADMIN_TOKEN}`,
        });
        const [laptop] = body.pull_routes as { pending: number }[];
        return laptop.pending === 1 ? true : undefined;
      },
      { what: 'the update to wait in the pull lane', retryErrors: true },
    );
    // A client that never polled while an update waits: stale.
    await page.click('#tab-routes');
    await page.click('#tab-bots');
    await page.waitForSelector(`${route} .badge.bad`);
    expect(await page.textContent('#bots .bot[data-id="sol"]')).toContain('unhealthy');

    const polled = await request(`${app.url}/bot${sol.id}:${LAPTOP_TOKEN}/getUpdates`);
    await polled.body.dump();
    await page.click('#tab-routes');
    await page.click('#tab-bots');
    await page.waitForSelector(`${route} .badge.ok`);
    expect(await page.textContent(route)).toMatch(
      /^laptop \(client laptop\): 1 pending, last polled \S/,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-pull-routes.png'), fullPage: true });
    await page.close();
  }, 90_000);

  it('ran without a script error or a blocked resource', () => {
    expect(pageErrors).toEqual([]);
  });
});
