import { startApp, type RunningApp } from '@relaygram/observability';
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
});
