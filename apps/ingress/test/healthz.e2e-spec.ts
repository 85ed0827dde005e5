import type { RunningApp } from '@relaygram/platform';
import { startRedisServer, type LocalRedis } from '@relaygram/queue';
import { request } from 'undici';
import { bootIngress, uniquePrefix, writeConfig } from './admin-kit';

async function getJson(url: string) {
  const res = await request(url);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

function bot(body: Record<string, unknown>, id: string): Record<string, unknown> | undefined {
  return (body.bots as Record<string, unknown>[]).find((b) => b.id === id);
}

describe('/healthz when Redis does not answer (ingress app)', () => {
  let redis: LocalRedis;
  let port: number;
  let config: ReturnType<typeof writeConfig>;
  let app: RunningApp;
  let again: LocalRedis | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    port = Number(new URL(redis.url).port);
    config = writeConfig({
      redis: { url: redis.url, prefix: uniquePrefix('healthz-down') },
      telegram: { api_base: 'http://127.0.0.1:9' },
      bots: [
        {
          id: 'lonely',
          token_env: 'LONELY_TOKEN',
          mode: 'webhook',
          webhook: {
            url: 'https://relay.example.com/webhooks/telegram/lonely',
            secret_token_env: 'LONELY_SECRET',
            manage: false,
          },
        },
      ],
      routes: [],
      clients: [],
    });
    app = await bootIngress(config.path, {
      REDIS_URL: redis.url,
      LONELY_TOKEN: '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0',
      LONELY_SECRET: 'lonely_secret_0123456789',
    });
  });

  afterAll(async () => {
    await app?.close();
    await again?.stop();
    await redis?.stop();
    config?.cleanup();
  });

  it('answers 200 with the bot counts while Redis is up', async () => {
    const { status, body } = await getJson(`${app.url}/healthz`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'ok', service: 'ingress', polling: false });
    expect(bot(body, 'lonely')).toMatchObject({ mode: 'webhook', queue: 0, dead: 0 });
  });

  it('answers 503 with what it knows once Redis is gone; readiness fails, liveness holds', async () => {
    await redis.stop();
    for (const base of [app.url, app.adminUrl]) {
      const { status, body } = await getJson(`${base}/healthz`);
      expect(status).toBe(503);
      expect(body).toMatchObject({
        status: 'degraded',
        service: 'ingress',
        polling: false,
        error: 'Redis does not answer',
      });
      expect(bot(body, 'lonely')).toMatchObject({ mode: 'webhook', queue: null, dead: null });
    }
    const ready = await getJson(`${app.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'error', error: { redis: { status: 'down' } } });
    expect((await getJson(`${app.url}/health/live`)).status).toBe(200);
  });

  it('recovers once Redis is back', async () => {
    // A fresh, empty server on the same port: what a restart without persistence gives.
    again = await startRedisServer({ port });
    const deadline = Date.now() + 15_000;
    let ready = await getJson(`${app.url}/health/ready`);
    while (ready.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await getJson(`${app.url}/health/ready`);
    }
    expect(ready.status).toBe(200);
    const { status, body } = await getJson(`${app.url}/healthz`);
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
  });
});
