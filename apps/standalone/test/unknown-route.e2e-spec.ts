import { startApp, type RunningApp } from '@relaygram/platform';
import { request } from 'undici';
import { Writable } from 'node:stream';
import { testAppEnv, writeTestConfig, type TestConfigFile } from '@relaygram/testing';
import { StandaloneAppModule } from '../src/app.module';

const SECRET = 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';

describe('an unknown route whose path carries a token', () => {
  let running: RunningApp;
  const lines: string[] = [];
  let config: TestConfigFile;

  beforeAll(async () => {
    config = writeTestConfig();
    running = await startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      {
        env: testAppEnv(config.path, { LOG_LEVEL: 'debug' }),
        signals: false,
        logDestination: new Writable({
          write: (chunk, _enc, done) => {
            lines.push(String(chunk));
            done();
          },
        }),
      },
    );
  });
  afterAll(async () => {
    await running.close();
    config.remove();
  });

  it.each([
    [`/bott123456789:${SECRET}/sendMessage`],
    [`/Bot123456789%3A${SECRET}/sendMessage`],
    [`/api/v2/123456789:${SECRET}`],
  ])('answers 404 for %s without echoing the path or logging the secret', async (path) => {
    const res = await request(`${running.url}${path}`);
    const body = await res.body.text();
    expect(res.statusCode).toBe(404);
    expect(body).not.toContain(SECRET);
    expect(lines.join('')).not.toContain(SECRET);
    expect(lines.some((line) => line.includes('"status":404'))).toBe(true);
  });

  it.each([
    [
      '/nope',
      'application/json',
      { statusCode: 404, error: 'Not Found', message: 'no such route' },
    ],
    [
      '/webhooks/nope/x',
      'application/json',
      { statusCode: 404, error: 'Not Found', message: 'no such route' },
    ],
    ['/api/v1/nope', 'application/json', { error: 'not found' }],
    ['/api/v1/nope', 'application/x-www-form-urlencoded', { error: 'not found' }],
    [
      '/nope',
      'multipart/form-data; boundary=x',
      { statusCode: 404, error: 'Not Found', message: 'no such route' },
    ],
  ])(
    'answers 404 to a malformed body on %s (%s), as to any unknown path',
    async (path, type, answer) => {
      const res = await request(`${running.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: '{"text": "unfinished',
      });
      expect(res.statusCode).toBe(404);
      expect(await res.body.json()).toEqual(answer);
      // The connection stays usable: the unread body was discarded, not taken as a request.
      const next = await request(`${running.url}/nope`);
      expect(next.statusCode).toBe(404);
      await next.body.dump();
    },
  );
});
