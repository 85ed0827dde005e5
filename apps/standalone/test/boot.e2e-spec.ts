import { startApp, type RunningApp } from '@relaygram/observability';
import { request } from 'undici';
import { Writable } from 'node:stream';
import { writeTestConfig, type TestConfigFile } from '@relaygram/testing';
import { StandaloneAppModule } from '../src/app.module';

describe('standalone app', () => {
  let running: RunningApp;
  let config: TestConfigFile;

  beforeAll(async () => {
    config = writeTestConfig();
    running = await startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      {
        env: {
          PORT: '0',
          ADMIN_PORT: '0',
          REDIS_URL: process.env.REDIS_URL,
          RELAYGRAM_CONFIG: config.path,
          LOG_LEVEL: 'warn',
        },
        signals: false,
        logDestination: new Writable({ write: (_chunk, _enc, done) => done() }),
      },
    );
  });
  afterAll(async () => {
    await running.close();
    config.remove();
  });

  it('answers the liveness probe on the public and the management listener', async () => {
    for (const base of [running.url, running.adminUrl]) {
      const res = await request(`${base}/health/live`);
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toMatchObject({ status: 'ok' });
    }
  });

  it('keeps management paths off the public port', async () => {
    const res = await request(`${running.url}/metrics`);
    expect(res.statusCode).toBe(404);
    await res.body.dump();
  });
});
