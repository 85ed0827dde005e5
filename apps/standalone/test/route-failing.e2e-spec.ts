import type { RunningApp } from '@relaygram/platform';
import {
  describeWithChromium,
  eventually,
  HEADLESS_CHROMIUM_ARGS,
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
} from '@relaygram/testing';
import type { RouteFailing } from '@relaygram/observability';
import { chromium, type Browser } from 'playwright-core';
import { bootStandalone, getJson, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'failing-test-admin-token-0123456789';
const ANSWER = 'token expired for the site hook; ' + 'x'.repeat(300);

/**
 * Issue 19, item 4: a target answering 401 makes its route show the status, the first
 * bytes of the answer and since when, on /healthz (both listeners) and on the admin API
 * and page; a later 2xx clears it. Real Redis, real HTTP.
 */
describe('a failing route shows why (standalone)', () => {
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let sol: BotIdentity;
  let prefix: string;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  let browser: Browser | undefined;
  let refusing = true;
  let firstRefusalAt = 0;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  async function routesOnHealthz(base: string) {
    const { status, body } = await getJson(`${base}/healthz`);
    expect(status).toBe(200);
    const routes = body.routes as { name: string; failing: RouteFailing | null }[];
    return Object.fromEntries(routes.map((r) => [r.name, r.failing]));
  }

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    receiver = await RecordingReceiver.start();
    receiver.respondWith((delivery) => {
      if (!delivery.path.startsWith('/site') || !refusing) return { status: 204 };
      firstRefusalAt ||= Date.now();
      return { status: 401, body: ANSWER, headers: { 'content-type': 'text/plain' } };
    });
    sol = emulator.addBot({ username: 'sol_failing_bot' });
    prefix = uniquePrefix('route-failing');
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix },
      telegram: { api_base: emulator.apiRoot },
      bots: [{ id: 'sol', token_env: 'SOL_TOKEN', mode: 'polling' }],
      routes: [
        {
          name: 'site',
          bots: ['sol'],
          target_url: `${receiver.url}/site?key=do-not-show`,
          retry: { backoff_cap: '1s' },
        },
        { name: 'calm', bots: ['sol'], target_url: `${receiver.url}/calm` },
      ],
    });
    app = await bootStandalone(config.path, { ADMIN_TOKEN, SOL_TOKEN: sol.token });
  });

  afterAll(async () => {
    await browser?.close();
    await stopStandalone({ app, receiver, emulator, prefix, config });
  });

  it('lists every route on /healthz, none failing at first', async () => {
    const routes = await routesOnHealthz(app.url);
    expect(routes).toEqual({ site: null, calm: null });
  });

  it("shows the 401, the answer's first bytes and since when on /healthz and the admin API", async () => {
    emulator.message(sol.token, { chatId: 7, text: 'hello' });
    const failing = await eventually(
      async () => (await routesOnHealthz(app.url)).site ?? undefined,
      { what: 'site failing on /healthz', timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(failing).toMatchObject({ status: 401, error: 'HTTP 401' });
    expect(failing.attempts).toBeGreaterThanOrEqual(5);
    expect(failing.body).toBe(ANSWER.slice(0, 200));
    const since = Date.parse(failing.since);
    expect(Math.abs(since - firstRefusalAt)).toBeLessThan(1000);
    expect(Date.parse(failing.last_at)).toBeGreaterThanOrEqual(since);
    expect(JSON.stringify(failing)).not.toContain('do-not-show');

    const onAdmin = await routesOnHealthz(app.adminUrl);
    expect(onAdmin.site).toMatchObject({ status: 401, since: failing.since });
    expect(onAdmin.calm).toBeNull();
    const { body: route } = await getJson(`${app.adminUrl}/admin/api/routes/site`, admin);
    expect(route.failing).toMatchObject({
      status: 401,
      body: ANSWER.slice(0, 200),
      since: failing.since,
    });
    // /healthz keeps its own fields and meaning: bots decide ok or degraded.
    const { body } = await getJson(`${app.url}/healthz`);
    expect(body).toMatchObject({ status: 'ok', service: 'standalone', polling: true });
  });

  describeWithChromium('on the admin page', (chromiumPath) => {
    it('shows the failing status, the answer and since when on the route card', async () => {
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: HEADLESS_CHROMIUM_ARGS,
      });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${app.adminUrl}/admin#routes`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.click('#login-form button[type=submit]');
      const failing = page.locator('#routes .route[data-name="site"] .failing');
      await failing.waitFor();
      const text = (await failing.textContent()) ?? '';
      expect(text).toContain('HTTP 401');
      expect(text).toContain('token expired for the site hook');
      expect(await failing.getAttribute('data-since')).toEqual(expect.any(String));
      expect(await page.locator('#routes .route[data-name="calm"] .failing').count()).toBe(0);
      await page.close();
    });
  });

  it('clears it once the target answers 2xx again', async () => {
    refusing = false;
    await eventually(
      () => receiver.deliveries.some((d) => d.path.startsWith('/site') && d.status === 204),
      { what: 'the site delivered', timeoutMs: 10_000, intervalMs: 100 },
    );
    await eventually(
      async () => {
        const [pub, mgmt] = await Promise.all([
          routesOnHealthz(app.url),
          routesOnHealthz(app.adminUrl),
        ]);
        return pub.site === null && mgmt.site === null;
      },
      { what: 'site no longer failing', timeoutMs: 15_000, intervalMs: 250 },
    );
    const { body: route } = await getJson(`${app.adminUrl}/admin/api/routes/site`, admin);
    expect(route.failing).toBeNull();
  });
});
