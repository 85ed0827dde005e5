import type { RunningApp } from '@relaygram/platform';
import { describeWithChromium, HEADLESS_CHROMIUM_ARGS } from '@relaygram/testing';
import { chromium, type Browser } from 'playwright-core';
import { request } from 'undici';
import { bootStandalone, stopStandalone, uniquePrefix, writeConfig } from './admin-kit';

const ADMIN_TOKEN = 'reference-test-admin-token-0123456789';

async function fetched(url: string) {
  const res = await request(url);
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}

function started(adminToken?: string) {
  const prefix = uniquePrefix('reference');
  const config = writeConfig({ redis: { url: 'redis://127.0.0.1:6379', prefix } });
  const app = bootStandalone(config.path, adminToken ? { ADMIN_TOKEN: adminToken } : {});
  return { prefix, config, app };
}

/** The API reference page: Swagger UI from the package, beside the admin page. */
describe('API reference page (standalone)', () => {
  let app: RunningApp;
  let parts: ReturnType<typeof started>;

  beforeAll(async () => {
    parts = started(ADMIN_TOKEN);
    app = await parts.app;
  });
  afterAll(() => stopStandalone({ ...parts, app }));

  it('serves the page and its files from this listener only, under a strict CSP', async () => {
    const page = await fetched(`${app.adminUrl}/admin/reference`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(page.body).not.toMatch(/https?:\/\//);
    for (const [file, type] of [
      ['swagger-ui-bundle.js', /^text\/javascript/],
      ['swagger-ui-standalone-preset.js', /^text\/javascript/],
      ['reference.js', /^text\/javascript/],
      ['swagger-ui.css', /^text\/css/],
    ] as const) {
      const asset = await fetched(`${app.adminUrl}/admin/reference/assets/${file}`);
      expect([file, asset.status]).toEqual([file, 200]);
      expect(asset.headers['content-type']).toMatch(type);
    }
    const unknown = await fetched(`${app.adminUrl}/admin/reference/assets/other.js`);
    expect([unknown.status, unknown.headers['content-type']]).toEqual([
      404,
      'application/json; charset=utf-8',
    ]);
    expect((await fetched(`${app.url}/admin/reference`)).status).toBe(404);
  });

  it('does not exist without ADMIN_TOKEN, like the admin page', async () => {
    const bare = started();
    const bareApp = await bare.app;
    try {
      for (const path of ['/admin/reference', '/admin/openapi.json', '/admin']) {
        expect([path, (await fetched(`${bareApp.adminUrl}${path}`)).status]).toEqual([path, 404]);
      }
      expect((await fetched(`${bareApp.url}/api/v1/openapi.json`)).status).toBe(200);
    } finally {
      await stopStandalone({ ...bare, app: bareApp });
    }
  });
});

describeWithChromium('API reference page in a browser (standalone)', (chromiumPath) => {
  let browser: Browser;
  let app: RunningApp;
  let parts: ReturnType<typeof started>;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: HEADLESS_CHROMIUM_ARGS });
    parts = started(ADMIN_TOKEN);
    app = await parts.app;
  });
  afterAll(async () => {
    await browser?.close();
    await stopStandalone({ ...parts, app });
  });

  it('renders both documents with Swagger UI, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // Chromium reports every 4xx as a console error: the failed answers are listed below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text());
    });
    page.on('response', (res) => {
      // Chromium asks for a favicon the page does not have.
      if (res.status() >= 400 && !res.url().endsWith('/favicon.ico'))
        problems.push(`${res.status()} ${res.url()}`);
    });
    page.on('request', (req) => {
      if (!req.url().startsWith(app.adminUrl) && !req.url().startsWith('data:'))
        elsewhere.push(req.url());
    });
    await page.goto(`${app.adminUrl}/admin/reference`);
    await page.getByText('/admin/api/dead-letters/{id}/replay').first().waitFor();
    expect(await page.getByText('Relaygram management API').count()).toBeGreaterThan(0);

    await page.selectOption('select', { label: 'public' });
    await page.getByText('/api/v1/{botId}/messages/send').first().waitFor();
    await page.getByText('/bot{token}/{method}').first().waitFor();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await page.close();
  });
});
