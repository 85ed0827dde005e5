import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigService } from '@relaygram/config';
import { BroadcastStore } from '@relaygram/queue';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { describeWithChromium, HEADLESS_CHROMIUM_ARGS, TelegramEmulator } from '@relaygram/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminCall, BLOCKED, seedBroadcast, seedOutboxFailure } from './support/broadcast-seed';
import { bootGateway, type GatewayApp } from './support/gateway-app';

const SCREENSHOTS = join(__dirname, 'screenshots');
const ADMIN_TOKEN = 'broadcasts-page-admin-token-0123456789';
const BOT = 'shop-bot';
/** The page's size of a page of broadcasts. */
const PAGE_SIZE = 50;
/** As a dispatcher words it, with markup that must show as text. */
const REFUSED_TOKEN =
  "Telegram refused the bot's token (401 Unauthorized): every send would fail. <b>Fix the token</b>, then resume.";
const SIDEWAYS_OVERFLOW =
  'document.documentElement.scrollWidth - document.documentElement.clientWidth';

/**
 * The admin page's Outbox tab in a headless Chromium against the gateway app (issue 16):
 * a broadcast's card with its progress bar, refreshed as it moves; Pause, Resume and
 * Cancel, each enabled only when the status allows, checked against Redis; the
 * recipients not sent; an outbox send Telegram refused, re-sent. No dispatcher runs here:
 * a broadcast moves only when the test settles its recipients.
 */
describeWithChromium('admin page: broadcasts and outbox failures (gateway)', (chromiumPath) => {
  let browser: Browser;
  let emulator: TelegramEmulator;
  let app: GatewayApp;
  let fixture: QueueFixture;
  let store: BroadcastStore;
  const pageErrors: string[] = [];

  const statusInRedis = (id: string) =>
    fixture.redis.hget(fixture.ctx.keys.broadcast(BOT, id), 'status');
  const card = (id: string) => `#broadcasts .broadcast[data-id="${id}"]`;

  /** `frozen`: the page's timers never fire, so its refresh cycle cannot race a step. */
  async function openOutboxTab(
    viewport: { width: number; height: number },
    frozen = false,
  ): Promise<Page> {
    const page = await browser.newPage({ viewport });
    if (frozen) {
      await page.clock.install();
      await page.clock.pauseAt(Date.now() + 1000);
    }
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // Chromium reports every 4xx answer as a console error; the 409 test causes one.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
    await page.goto(`${app.running.adminUrl}/admin`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#app:not([hidden])');
    await page.click('#tab-outbox');
    return page;
  }

  async function shownIds(page: Page): Promise<(string | null)[]> {
    const cards = await page.locator('#broadcasts .broadcast').all();
    return Promise.all(cards.map((one) => one.getAttribute('data-id')));
  }

  async function attributes(page: Page, selector: string, names: string[]) {
    const values: Record<string, string | null> = {};
    for (const name of names) values[name] = await page.getAttribute(selector, name);
    return values;
  }

  /** Settles the next `count` recipients as sent, as a dispatcher would. */
  async function sendMore(id: string, count: number): Promise<void> {
    const claim = await store.claim(BOT, id, count);
    if (claim.status !== 'running') throw new Error(`broadcast ${id} is ${claim.status}`);
    const results = claim.recipients.map(({ index }) => ({ index, outcome: 'sent' as const }));
    await store.settle(BOT, id, results);
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: chromiumPath, args: HEADLESS_CHROMIUM_ARGS });
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    app = await bootGateway(
      'gw-bc-page',
      {
        bots: [{ id: BOT, token_env: 'BCP_BOT_TOKEN', mode: 'polling', default: true }],
        routes: [],
        clients: [{ name: 'shop', token_env: 'BCP_CLIENT_TOKEN', bots: [BOT] }],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        BCP_BOT_TOKEN: bot.token,
        BCP_CLIENT_TOKEN: randomBytes(24).toString('base64url'),
        ADMIN_TOKEN,
      },
    );
    store = app.running.app.get(BroadcastStore);
    const prefix = app.running.app.get(ConfigService).config.redis.prefix;
    fixture = await createQueueFixture('gw-bc-page', prefix);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await fixture?.cleanup();
    await emulator?.stop();
  });

  it('shows a broadcast with its progress bar, and follows it on the refresh cycle', async () => {
    const id = await seedBroadcast(store, {
      bot: BOT,
      recipients: 20,
      sent: 8,
      blocked: 3,
      failed: 1,
      firstChat: 500,
    });
    const finished = await seedBroadcast(store, { bot: BOT, recipients: 2, sent: 2 });
    const page = await openOutboxTab({ width: 1280, height: 900 });
    await page.waitForSelector(card(id));

    expect(
      await attributes(page, card(id), [
        'data-bot',
        'data-status',
        'data-total',
        'data-sent',
        'data-blocked',
        'data-failed',
        'data-pending',
      ]),
    ).toEqual({
      'data-bot': BOT,
      'data-status': 'running',
      'data-total': '20',
      'data-sent': '8',
      'data-blocked': '3',
      'data-failed': '1',
      'data-pending': '8',
    });
    // Stacked: sent from 0, blocked after it, failed after both; widths in % of 20.
    const segments: Record<string, Record<string, string | null>> = {};
    for (const name of ['sent', 'blocked', 'failed'])
      segments[name] = await attributes(page, `${card(id)} .stacked .seg.${name}`, [
        'x',
        'width',
        'data-value',
      ]);
    expect(segments).toEqual({
      sent: { x: '0.00', width: '40.00', 'data-value': '8' },
      blocked: { x: '40.00', width: '15.00', 'data-value': '3' },
      failed: { x: '55.00', width: '5.00', 'data-value': '1' },
    });
    // Drawn to scale: the sent part is 40 % of the bar's width, and tall enough to see.
    const whole = await page.locator(`${card(id)} svg.stacked`).boundingBox();
    const sentPart = await page.locator(`${card(id)} .stacked .seg.sent`).boundingBox();
    expect(sentPart!.width / whole!.width).toBeCloseTo(0.4, 2);
    expect(sentPart!.height).toBeGreaterThanOrEqual(8);
    const bar = page.getByRole('progressbar', { name: `Progress of broadcast ${id.slice(0, 8)}` });
    expect(await bar.getAttribute('aria-valuenow')).toBe('12');
    expect(await bar.getAttribute('aria-valuemax')).toBe('20');
    expect(await bar.getAttribute('aria-valuetext')).toBe(
      '12 of 20 settled: 8 sent, 3 blocked, 1 failed, 8 pending',
    );
    const text = (await page.textContent(card(id))) ?? '';
    expect(text).toContain('sendMessage');
    expect(text).toMatch(/rate0\.2 \/ s/);
    expect(text).not.toMatch(/estimated finish–/);
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-broadcasts.png'), fullPage: true });

    // Buttons by their accessible names, enabled only where the status allows.
    const button = (label: string, of = id) =>
      page.getByRole('button', { name: `${label} broadcast ${of} of ${BOT}` });
    expect(await button('Pause').isEnabled()).toBe(true);
    expect(await button('Resume').isDisabled()).toBe(true);
    expect(await button('Cancel').isEnabled()).toBe(true);
    await page.waitForSelector(`${card(finished)}[data-status="done"]`);
    for (const label of ['Pause', 'Resume', 'Cancel'])
      expect(await button(label, finished).isDisabled()).toBe(true);

    // The recipients not sent, with Telegram's answers.
    await page.click(`${card(id)} details.not-sent summary`);
    const blocked = `${card(id)} ul.failures[data-reason="blocked"] li[data-chat]`;
    await page.locator(blocked).nth(2).waitFor();
    expect(await page.locator(blocked).allTextContents()).toEqual(
      [508, 509, 510].map((chat) => `chat ${chat}: 403 ${BLOCKED}`),
    );

    // A dispatcher sends four more: the card follows on the page's refresh cycle.
    await sendMore(id, 4);
    await page.waitForSelector(`${card(id)}[data-sent="12"][data-pending="4"]`, {
      timeout: 15_000,
    });
    expect(await bar.getAttribute('aria-valuenow')).toBe('16');
    expect(await page.getAttribute(`${card(id)} .stacked .seg.sent`, 'width')).toBe('60.00');
    await page.close();
  }, 60_000);

  it('pauses, resumes and cancels (after asking) with the buttons, and Redis says so', async () => {
    const id = await seedBroadcast(store, { bot: BOT, recipients: 10, sent: 4 });
    const page = await openOutboxTab({ width: 1024, height: 768 });
    const button = (label: string) =>
      page.getByRole('button', { name: `${label} broadcast ${id} of ${BOT}` });
    await page.waitForSelector(`${card(id)}[data-status="running"]`);

    await button('Pause').click();
    await page.waitForSelector(`${card(id)}[data-status="paused"]`);
    expect(await statusInRedis(id)).toBe('paused');
    await page.locator('#status', { hasText: `Paused broadcast ${id.slice(0, 8)}` }).waitFor();
    expect(await button('Pause').isDisabled()).toBe(true);
    expect(await button('Resume').isEnabled()).toBe(true);
    expect(await page.textContent(`${card(id)} .badge.status`)).toBe('paused');
    await page.screenshot({
      path: join(SCREENSHOTS, 'admin-broadcast-paused.png'),
      fullPage: true,
    });

    await button('Resume').click();
    await page.waitForSelector(`${card(id)}[data-status="running"]`);
    expect(await statusInRedis(id)).toBe('running');
    expect(await button('Pause').isEnabled()).toBe(true);

    // Cancel asks first; saying no changes nothing.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await button('Cancel').click();
    expect(asked).toEqual([
      `Cancel broadcast ${id} of ${BOT}? Its 6 pending recipients will never be sent.`,
    ]);
    expect(await statusInRedis(id)).toBe('running');
    expect(await page.getAttribute(card(id), 'data-status')).toBe('running');

    page.once('dialog', (dialog) => void dialog.accept());
    await button('Cancel').click();
    await page.waitForSelector(`${card(id)}[data-status="cancelled"]`);
    expect(await statusInRedis(id)).toBe('cancelled');
    for (const label of ['Pause', 'Resume', 'Cancel'])
      expect(await button(label).isDisabled()).toBe(true);
    expect(await page.getAttribute(card(id), 'data-pending')).toBe('6');
    await page.close();
  }, 60_000);

  it('says why when an action is refused, and shows the status Redis has', async () => {
    const id = await seedBroadcast(store, { bot: BOT, recipients: 3 });
    const page = await openOutboxTab({ width: 1024, height: 768 }, true);
    await page.waitForSelector(`${card(id)}[data-status="running"]`);
    // Paused elsewhere (the CLI, another tab) since the page last looked; the page's
    // clock stands still, so only the refused click can tell it.
    expect(await store.control(BOT, id, 'pause')).toEqual({ ok: true, status: 'paused' });
    await page.getByRole('button', { name: `Pause broadcast ${id} of ${BOT}` }).click();
    await page
      .locator('#status.error', { hasText: `broadcast ${id} is paused: only a running` })
      .waitFor();
    await page.waitForSelector(`${card(id)}[data-status="paused"]`);
    await page.close();
  }, 60_000);

  it('lists an outbox send Telegram refused, with its method, chat and error, and re-sends it', async () => {
    const sendId = await seedOutboxFailure(fixture, BOT, 4242, 'your order shipped');
    const page = await openOutboxTab({ width: 390, height: 844 });
    const failure = `#outbox-failures .outbox-failure[data-id="${sendId}"]`;
    await page.waitForSelector(failure);
    expect(
      await attributes(page, failure, ['data-method', 'data-chat', 'data-error-code']),
    ).toEqual({ 'data-method': 'sendMessage', 'data-chat': '4242', 'data-error-code': '403' });
    const text = (await page.textContent(failure)) ?? '';
    expect(text).toContain(`Telegram said403 ${BLOCKED}`);
    expect(text).toContain('chat4242');
    expect(await page.evaluate<number>(SIDEWAYS_OVERFLOW)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-outbox-phone.png'), fullPage: true });

    await page.getByRole('button', { name: `Re-send outbox send ${sendId}` }).click();
    await page.waitForSelector(failure, { state: 'detached' });
    await page.locator('#status', { hasText: `Re-sent ${sendId}` }).waitFor();
    const gone = await adminCall(
      'GET',
      `${app.running.adminUrl}/admin/api/dead-letters/${sendId}`,
      ADMIN_TOKEN,
    );
    expect(gone.status).toBe(404);
    await page.close();
  }, 60_000);

  it('says why a dispatcher paused a broadcast, says nothing for an operator, and drops it on resume', async () => {
    const refused = await seedBroadcast(store, { bot: BOT, recipients: 5 });
    const byOperator = await seedBroadcast(store, { bot: BOT, recipients: 5 });
    const paused = { ok: true, status: 'paused' };
    expect(await store.control(BOT, refused, 'pause', Date.now(), REFUSED_TOKEN)).toEqual(paused);
    expect(await store.control(BOT, byOperator, 'pause')).toEqual(paused);
    const page = await openOutboxTab({ width: 390, height: 844 });
    const reason = (id: string) => page.locator(`${card(id)} .paused-reason`);
    await page.waitForSelector(`${card(byOperator)}[data-status="paused"]`);

    await reason(refused).waitFor({ state: 'visible' });
    expect(await reason(refused).textContent()).toBe(REFUSED_TOKEN);
    expect(await reason(refused).locator('b').count()).toBe(0);
    expect(await reason(byOperator).isVisible()).toBe(false);
    expect(await reason(byOperator).textContent()).toBe('');
    expect(await page.evaluate<number>(SIDEWAYS_OVERFLOW)).toBeLessThanOrEqual(0);
    await page.locator(card(refused)).screenshot({
      path: join(SCREENSHOTS, 'admin-broadcast-paused-reason.png'),
    });

    await page.getByRole('button', { name: `Resume broadcast ${refused} of ${BOT}` }).click();
    await page.waitForSelector(`${card(refused)}[data-status="running"]`);
    expect(await statusInRedis(refused)).toBe('running');
    expect(await reason(refused).isVisible()).toBe(false);
    expect(await reason(refused).textContent()).toBe('');
    await page.close();
  }, 60_000);

  it('pages through more broadcasts than fit one page, Older then Newer', async () => {
    // An hour old and a second apart: older than every other test's, in a known order.
    const paged: string[] = [];
    for (let i = 0; i < PAGE_SIZE + 5; i++)
      paged.push(
        await seedBroadcast(store, { bot: BOT, recipients: 1, startedAgoMs: 3_600_000 + i * 1000 }),
      );
    const others = (await store.list(BOT, 0, 1000)).length - paged.length;
    const page = await openOutboxTab({ width: 1024, height: 768 });
    const pager = '#broadcasts-pager';
    const newer = page.getByRole('button', { name: 'Newer', exact: true });
    const older = page.getByRole('button', { name: 'Older', exact: true });
    await page.waitForSelector(`${pager}[data-offset="0"]:not([hidden])`);

    const first = await shownIds(page);
    expect(first).toHaveLength(PAGE_SIZE);
    expect(first.slice(others)).toEqual(paged.slice(0, PAGE_SIZE - others));
    expect(await page.textContent('#broadcasts-range')).toBe(`1–${PAGE_SIZE}`);
    expect(await newer.isDisabled()).toBe(true);
    expect(await older.isEnabled()).toBe(true);

    await older.click();
    await page.waitForSelector(`${pager}[data-offset="${PAGE_SIZE}"]`);
    const second = await shownIds(page);
    expect(second).toEqual(paged.slice(PAGE_SIZE - others));
    expect(await page.textContent('#broadcasts-range')).toBe(
      `${PAGE_SIZE + 1}–${PAGE_SIZE + second.length}`,
    );
    expect(await older.isDisabled()).toBe(true);
    expect(await newer.isEnabled()).toBe(true);
    expect(await page.isHidden('#broadcasts-end')).toBe(true);
    await page.screenshot({
      path: join(SCREENSHOTS, 'admin-broadcasts-older.png'),
      fullPage: true,
    });

    await newer.click();
    await page.waitForSelector(`${pager}[data-offset="0"]`);
    expect(await shownIds(page)).toEqual(first);
    expect(await newer.isDisabled()).toBe(true);
    await page.close();
  }, 60_000);

  it('ran without a script error or a blocked resource', () => {
    expect(pageErrors).toEqual([]);
  });
});
