import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MinuteBucket } from '@relaygram/observability';
import type { RunningApp } from '@relaygram/platform';
import {
  describeWithChromium,
  eventually,
  HEADLESS_CHROMIUM_ARGS,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
} from '@relaygram/testing';
import { chromium, type Browser } from 'playwright-core';
import { bootStandalone, getJson, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'charts-test-admin-token-0123456789';
const SCREENSHOTS = join(__dirname, 'screenshots');
const SERIES = ['accepted', 'delivered', 'failed', 'dead'] as const;

type Totals = Record<(typeof SERIES)[number], number>;

function totals(buckets: MinuteBucket[]): Totals {
  const sum = (series: keyof Totals) => buckets.reduce((n, b) => n + b[series], 0);
  return {
    accepted: sum('accepted'),
    delivered: sum('delivered'),
    failed: sum('failed'),
    dead: sum('dead'),
  };
}

/**
 * Issue 19, item 3: a scripted run through the standalone process (three updates
 * delivered at once, one after a 503, two refused with a 400 and dead at once), then the
 * minute buckets of the admin API and the charts of the page hold exactly those counts.
 */
describe('minute charts (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const expected: Totals = { accepted: 6, delivered: 4, failed: 3, dead: 2 };

  const charts = async (path: string) => {
    const { status, body } = await getJson(`${app.adminUrl}/admin/api/${path}/charts`, admin);
    expect(status).toBe(200);
    return body as { from: string; minute_ms: number; buckets: MinuteBucket[] };
  };

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    let flakyAnswered = false;
    receiver.respondWith((delivery) => {
      const text = (delivery.json as { message?: { text?: string } }).message?.text ?? '';
      if (text.startsWith('refuse')) return { status: 400, body: { error: 'not this one' } };
      if (text === 'flaky' && !flakyAnswered) {
        flakyAnswered = true;
        return { status: 503, body: 'busy' };
      }
      return { status: 204 };
    });
    sol = emulator.addBot({ username: 'sol_charts_bot' });
    prefix = uniquePrefix('minute-charts');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' }],
      routes: [
        {
          name: 'site',
          bots: ['sol'],
          target_url: `${receiver.url}/site`,
          retry: { backoff_cap: '1s' },
        },
        {
          name: 'quiet',
          bots: ['sol'],
          target_url: `${receiver.url}/quiet`,
          match: { commands: ['/never'] },
        },
      ],
    });
    app = await bootStandalone(config.path, { ADMIN_TOKEN, SOL_TOKEN: sol.token });

    ['ok-1', 'ok-2', 'ok-3', 'flaky', 'refuse-1', 'refuse-2'].forEach((text, i) =>
      emulator.message(sol.token, { chatId: 100 + i, text }),
    );
    await eventually(() => receiver.deliveries.filter((d) => d.status === 204).length === 4, {
      what: 'four deliveries answered 204',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
  });

  afterAll(() => stopStandalone({ app, receiver, emulator, prefix, config }));

  it("answers the route's last hour in 60 minute buckets with the run's counts", async () => {
    const body = await eventually(
      async () => {
        const body = await charts('routes/site');
        const sum = totals(body.buckets);
        return sum.delivered === expected.delivered && sum.dead === expected.dead
          ? body
          : undefined;
      },
      { what: 'the run counted in the minute buckets', timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(body.minute_ms).toBe(60_000);
    expect(body.buckets).toHaveLength(60);
    const starts = body.buckets.map((b) => Date.parse(b.at));
    expect(starts[0]).toBe(Date.parse(body.from));
    starts.forEach((start, i) => i && expect(start - starts[i - 1]).toBe(60_000));
    expect(starts[59]).toBe(Math.floor(Date.now() / 60_000) * 60_000);
    expect(totals(body.buckets)).toEqual(expected);
    // The run took seconds: only the last two minutes can hold any of it.
    expect(totals(body.buckets.slice(0, 58))).toEqual({
      accepted: 0,
      delivered: 0,
      failed: 0,
      dead: 0,
    });
    const withLatency = body.buckets.filter((b) => b.delivered > 0);
    expect(withLatency.length).toBeGreaterThan(0);
    for (const b of withLatency) {
      expect(b.p50_ms).toEqual(expect.any(Number));
      expect(b.p99_ms!).toBeGreaterThanOrEqual(b.p50_ms!);
    }
  });

  it("answers the bot's minutes: updates accepted, and its routes' outcomes", async () => {
    const body = await eventually(
      async () => {
        const body = await charts('bots/sol');
        return totals(body.buckets).delivered === expected.delivered ? body : undefined;
      },
      { what: "the bot's minute buckets", timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(totals(body.buckets)).toEqual(expected);
  });

  it('samples the queue depth into the current minute', async () => {
    const body = await eventually(
      async () => {
        const body = await charts('routes/site');
        return body.buckets[59].queue === 0 ? body : undefined;
      },
      { what: 'a queue sample of the current minute', timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(body.buckets[59].queue).toBe(0);
  });

  it('keeps a route that saw nothing at zero, and answers 404 for unknown names', async () => {
    const quiet = await charts('routes/quiet');
    expect(totals(quiet.buckets)).toEqual({ accepted: 0, delivered: 0, failed: 0, dead: 0 });
    for (const path of ['routes/nope', 'bots/nope']) {
      const { status, body } = await getJson(`${app.adminUrl}/admin/api/${path}/charts`, admin);
      expect(status).toBe(404);
      expect(body.error).toMatch(/nope/);
    }
    const { status } = await getJson(`${app.adminUrl}/admin/api/routes/site/charts`);
    expect(status).toBe(401);
  });

  describeWithChromium('on the admin page', (chromiumPath) => {
    let browser: Browser;

    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: HEADLESS_CHROMIUM_ARGS,
      });
    });
    afterAll(() => browser?.close());

    it("draws the route's and the bot's charts with the run's values", async () => {
      await eventually(
        async () => totals((await charts('routes/site')).buckets).delivered === expected.delivered,
        { what: 'the counts flushed', timeoutMs: 20_000, intervalMs: 250 },
      );
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${app.adminUrl}/admin#routes`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.click('#login-form button[type=submit]');
      const block = '#routes .route[data-name="site"] .charts';
      const read = async (selector: string, series: string) => {
        const line = page.locator(`${selector} polyline[data-series="${series}"]`);
        await line.waitFor({ state: 'attached' });
        const values = (await line.getAttribute('data-values'))!.split(',');
        expect(values).toHaveLength(60);
        return values.reduce((sum, v) => sum + (v === '' ? 0 : Number(v)), 0);
      };
      for (const series of SERIES) expect(await read(block, series)).toBe(expected[series]);
      // Each minute that counted something is a point carrying its value and minute.
      const points = page.locator(`${block} circle[data-series="delivered"]`);
      const values = await points.evaluateAll((nodes) =>
        nodes.map((node) => Number(node.getAttribute('data-value'))),
      );
      expect(values.reduce((a, b) => a + b, 0)).toBe(expected.delivered);
      expect(await points.first().locator('title').textContent()).toMatch(
        /^\d\d:\d\d delivered \d+$/,
      );
      await page
        .locator(`${block} figure[data-chart="latency"] polyline`)
        .first()
        .waitFor({ state: 'attached' });

      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'admin-route-charts.png'), fullPage: true });

      await page.click('#tab-bots');
      const bot = '#bots .bot[data-id="sol"] .charts';
      for (const series of SERIES) expect(await read(bot, series)).toBe(expected[series]);
      expect(pageErrors).toEqual([]);
      await page.close();
    });
  });
});
