import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningApp } from '@relaygram/platform';
import {
  describeWithChromium,
  eventually,
  HEADLESS_CHROMIUM_ARGS,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
} from '@relaygram/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { bootStandalone, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'dlog-page-test-admin-token-0123456789';
const SCREENSHOTS = join(__dirname, 'screenshots');
/** What the refusing target answers: markup that must show as text, never run. */
const REFUSAL = '<img src=x onerror="document.title=\'pwned\'">bad chat';
const SIDEWAYS_OVERFLOW =
  'document.documentElement.scrollWidth - document.documentElement.clientWidth';
/** One more than a page of Recent attempts (20), so there is an older page. */
const UPDATES = 21;

/**
 * Issue 19, item 2 on the admin page: an update delivered to one route (200) and refused
 * by another (400) is found by its update_id, with each delivery's state and attempt;
 * a route's Recent attempts list them, failed only on demand, and pages by cursor.
 */
describeWithChromium('the delivery log on the admin page (standalone)', (chromiumPath) => {
  let browser: Browser;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  let page: Page;
  const pageErrors: string[] = [];
  /** Every update's id, as shop received them. */
  const updateIds: number[] = [];
  /** The one update that also went to busy, which answers 503 every time. */
  let busyUpdateId: number;
  const updateIdOf = (d: { json: unknown }) => (d.json as { update_id: number }).update_id;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: HEADLESS_CHROMIUM_ARGS });
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith((delivery) => {
      if (delivery.path.startsWith('/refuse'))
        return { status: 400, body: REFUSAL, headers: { 'content-type': 'text/html' } };
      if (delivery.path.startsWith('/busy')) return { status: 503, body: 'busy, try later' };
      return { status: 200, body: { ok: true, line: 'first\nsecond' } };
    });
    sol = emulator.addBot({ username: 'sol_dlog_page_bot' });
    prefix = uniquePrefix('dlog-page');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' }],
      routes: [
        { name: 'shop', bots: ['sol'], target_url: `${receiver.url}/shop` },
        { name: 'refuse', bots: ['sol'], target_url: `${receiver.url}/refuse` },
        {
          name: 'busy',
          bots: ['sol'],
          target_url: `${receiver.url}/busy`,
          match: { commands: ['/busy'] },
          retry: { max_consecutive_5xx: 1000 },
        },
      ],
    });
    app = await bootStandalone(config.path, { ADMIN_TOKEN, SOL_TOKEN: sol.token });
    emulator.message(sol.token, { chatId: 9, text: '/busy' });
    for (let i = 1; i < UPDATES; i++)
      emulator.message(sol.token, { chatId: 10 + i, text: `hi ${i}` });
    const answered = (path: string) => receiver.deliveries.filter((d) => d.path === path);
    await eventually(
      () => answered('/shop').length === UPDATES && answered('/refuse').length === UPDATES,
      { what: 'every update delivered to shop and refuse', timeoutMs: 20_000, intervalMs: 100 },
    );
    updateIds.push(...answered('/shop').map(updateIdOf));
    busyUpdateId = await eventually(() => answered('/busy').map(updateIdOf)[0], {
      what: 'busy tried once',
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${app.adminUrl}/admin#trace`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.locator('#trace-bot option[value="sol"]').waitFor({ state: 'attached' });
  });

  afterAll(async () => {
    await browser?.close();
    await stopStandalone({ app, receiver, emulator, prefix, config });
  });

  it("finds an update by its update_id: each delivery's state and its attempts' statuses", async () => {
    const updateId = busyUpdateId;
    const delivery = (route: string) => page.locator(`#trace .delivery[data-route="${route}"]`);
    // The log is written as each attempt ends: look until all three are there.
    await eventually(
      async () => {
        await page.fill('#trace-update', String(updateId));
        await page.click('#trace-form button[type=submit]');
        await page.locator(`#trace .trace[data-update-id="${updateId}"]`).waitFor();
        return (
          (await delivery('refuse').getAttribute('data-state')) === 'dead' &&
          (await delivery('busy').locator('tr.attempt').count()) > 0
        );
      },
      { what: 'the trace with three outcomes', timeoutMs: 15_000, intervalMs: 250 },
    );
    const card = page.locator('#trace .trace');
    expect(await card.getAttribute('data-bot')).toBe('sol');
    expect(await card.getAttribute('data-status')).toBe('queued');
    expect(await delivery('shop').getAttribute('data-state')).toBe('delivered');

    const attempt = (route: string) => delivery(route).locator('tr.attempt');
    expect(await attempt('shop').count()).toBe(1);
    expect(await attempt('shop').getAttribute('data-status')).toBe('200');
    expect(await attempt('shop').getAttribute('data-outcome')).toBe('delivered');
    expect(await attempt('shop').locator('code.answer').textContent()).toBe(
      '{"ok":true,"line":"first\\nsecond"}',
    );
    expect(await attempt('refuse').getAttribute('data-status')).toBe('400');
    expect(await attempt('refuse').getAttribute('data-outcome')).toBe('dead');
    // The answer is text on the page: its markup neither parsed nor run.
    expect(await attempt('refuse').locator('code.answer').textContent()).toBe(REFUSAL);
    expect(await attempt('refuse').locator('img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    // busy answers 503 every time: retrying, with its next attempt's time.
    expect(await delivery('busy').getAttribute('data-state')).toBe('retrying');
    const next = Date.parse((await delivery('busy').getAttribute('data-next-attempt-at')) ?? '');
    expect(next).toBeGreaterThan(Date.now() - 60_000);
    expect(await delivery('busy').locator('.state').textContent()).toMatch(
      /^retrying, next attempt /,
    );
    const busy = await attempt('busy').evaluateAll((nodes) =>
      nodes.map(
        (n) =>
          `${n.getAttribute('data-attempt')} ${n.getAttribute('data-outcome')} ${n.getAttribute('data-status')}`,
      ),
    );
    expect(busy[0]).toBe('1 retry 503');
    busy.forEach((row, i) => expect(row).toBe(`${i + 1} retry 503`));
    expect(await attempt('busy').first().locator('code.answer').textContent()).toBe(
      'busy, try later',
    );
    expect(Number(await attempt('shop').getAttribute('data-duration-ms'))).toBeGreaterThanOrEqual(
      0,
    );
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-trace.png'), fullPage: true });
  });

  it('says when an update is not in the log', async () => {
    await page.fill('#trace-update', '987654321');
    await page.click('#trace-form button[type=submit]');
    const missing = page.locator('#trace .missing[data-update-id="987654321"]');
    await missing.waitFor();
    // The API's word: what the log keeps.
    expect(await missing.textContent()).toBe(
      'update 987654321 of bot sol is not in the delivery log: it keeps updates for 1d (delivery_log.max_age) and at most 10000 per bot (delivery_log.updates_per_bot)',
    );
    expect(await page.locator('#trace .trace').count()).toBe(0);
  });

  it("lists a route's recent attempts newest first, older ones by cursor, failed only on demand", async () => {
    await page.click('#tab-routes');
    const recent = (route: string) => `#routes .route[data-name="${route}"] .recent-attempts`;
    const rows = (route: string) => page.locator(`${recent(route)} tbody tr.attempt`);
    const read = (route: string) =>
      rows(route).evaluateAll((nodes) =>
        nodes.map((n) => ({
          id: n.getAttribute('data-id')!,
          update: Number(n.getAttribute('data-update-id')),
          status: n.getAttribute('data-status'),
        })),
      );
    // Lanes of different chats run side by side: newest first is the log's order (its
    // entry ids), not necessarily the update_ids'.
    const entryOrder = (id: string) => id.split('-').map(Number);
    const newerFirst = (a: { id: string }, b: { id: string }) => {
      const [x, y] = [entryOrder(a.id), entryOrder(b.id)];
      return y[0] - x[0] || y[1] - x[1];
    };

    await page.click(`${recent('shop')} summary`);
    await page.locator(`${recent('shop')}[data-loaded]`).waitFor();
    const firstPage = await read('shop');
    expect(firstPage).toHaveLength(20);
    expect(firstPage).toEqual([...firstPage].sort(newerFirst));
    await page.click(`${recent('shop')} button.older`);
    await eventually(async () => (await rows('shop').count()) === UPDATES, {
      what: 'the older page appended',
      intervalMs: 100,
    });
    const all = await read('shop');
    expect(all.slice(0, 20)).toEqual(firstPage);
    expect(all).toEqual([...all].sort(newerFirst));
    expect(all.map((row) => row.update).sort((a, b) => a - b)).toEqual(
      [...updateIds].sort((a, b) => a - b),
    );
    expect(new Set(all.map((row) => row.status))).toEqual(new Set(['200']));
    expect(await page.locator(`${recent('shop')} button.older`).isHidden()).toBe(true);

    await page.check(`${recent('shop')} input.failed-only`);
    await page.locator(`${recent('shop')} .empty:not([hidden])`).waitFor();
    expect(await rows('shop').count()).toBe(0);

    await page.click(`${recent('refuse')} summary`);
    await page.locator(`${recent('refuse')}[data-loaded]`).waitFor();
    await page.check(`${recent('refuse')} input.failed-only`);
    const outcomes = await rows('refuse').evaluateAll((nodes) =>
      nodes.map((n) => `${n.getAttribute('data-outcome')} ${n.getAttribute('data-status')}`),
    );
    expect(outcomes).toEqual(Array.from({ length: 20 }, () => 'dead 400'));
    expect(await rows('refuse').first().locator('code.answer').textContent()).toBe(REFUSAL);
    expect(await page.locator(`${recent('refuse')} button.older`).isVisible()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-recent-attempts.png'), fullPage: true });
    // On a phone the attempts table scrolls inside its card; the page does not.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>(SIDEWAYS_OVERFLOW)).toBeLessThanOrEqual(0);
    expect(pageErrors).toEqual([]);
  });
});
