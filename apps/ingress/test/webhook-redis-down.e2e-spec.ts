import { startRedisServer, type LocalRedis } from '@relaygram/queue';
import { TelegramEmulator, eventually } from '@relaygram/testing';
import { TestInstall, webhookSecret, type IngressInstance } from './support/test-install';

/**
 * Runs against a redis-server of its own, started here on a free port, so stopping it
 * mid-test leaves the shared test Redis alone.
 */
describe('webhook adapter while Redis is away', () => {
  let redis: LocalRedis;
  let emulator: TelegramEmulator;
  let install: TestInstall;
  const secret = webhookSecret();

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await TelegramEmulator.start();
    install = new TestInstall(
      {
        apiBase: emulator.apiRoot,
        bots: [
          {
            id: 'shop',
            mode: 'webhook',
            token: emulator.addBot({ username: 'shop_bot' }).token,
            username: 'shop_bot',
            webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret },
          },
        ],
        routes: [{ name: 'site' }],
      },
      redis.url,
    );
    await install.ready();
  });
  afterAll(async () => {
    await install.cleanup();
    await redis.stop();
    await emulator.stop();
  });

  /** Telegram's POST of a message update to the shop bot's webhook. */
  const postUpdate = (ingress: IngressInstance, updateId: number) =>
    ingress.post(
      '/webhooks/telegram/shop',
      JSON.stringify({ update_id: updateId, message: { text: 'hi', chat: { id: 1 } } }),
      { 'x-telegram-bot-api-secret-token': secret },
    );

  it('answers 503 without Retry-After while Redis is down, and 202 again once it is back', async () => {
    const ingress = await install.start();
    const post = (updateId: number) => postUpdate(ingress, updateId);
    expect((await post(1)).status).toBe(202);

    const port = Number(new URL(redis.url).port);
    await redis.stop();
    const down = await post(2);
    expect(down.status).toBe(503);
    expect(down.headers['retry-after']).toBeUndefined();
    expect(down.json).toEqual({
      error: 'Redis is unreachable: the update was not stored (Telegram retries)',
    });
    expect((await ingress.healthz()).status).toBe(503);

    // Telegram's retry after Redis is back is accepted.
    redis = await startRedisServer({ port });
    const back = await eventually(
      async () => {
        const res = await post(2);
        return res.status === 202 ? res : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: '202 once Redis is back' },
    );
    expect(back.json).toEqual({ status: 'queued', deliveries: 1 });
  });

  it('answers 503 within 2 s when Redis stops answering but keeps the connection, then 202 again', async () => {
    const ingress = await install.start();
    const post = (updateId: number) => postUpdate(ingress, updateId);
    expect((await post(100)).status).toBe(202);
    const pid = redis.pid as number;
    expect(pid).toBeGreaterThan(0);
    // A frozen redis-server keeps its sockets open: the kernel takes the bytes, nobody answers.
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const frozen = await post(101);
      const took = Date.now() - started;
      expect(frozen.status).toBe(503);
      expect(frozen.json).toEqual({
        error: 'Redis did not answer in time: the update may not be stored (Telegram retries)',
      });
      // Telegram waits far longer; 2 s is what a webhook answer may take here at most.
      expect(took).toBeLessThan(2000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The command that timed out may have run once Redis woke: Telegram's resend is then
    // a duplicate, never a second delivery.
    const again = await eventually(
      async () => {
        const res = await post(101);
        return res.status === 202 ? res : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: '202 once Redis answers again' },
    );
    expect(['queued', 'duplicate']).toContain((again.json as { status: string }).status);
  });
});
