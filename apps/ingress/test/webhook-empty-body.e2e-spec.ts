import { TelegramEmulator } from '@relaygram/testing';
import { request } from 'undici';
import { TestInstall, webhookSecret, type IngressInstance } from './support/test-install';

/**
 * A POST without a body and without Content-Type reaches the handler with no body at
 * all (Fastify parses nothing): it is "not an update", a 400, not a 500.
 */
describe('webhook adapter: a request without body or Content-Type', () => {
  const secret = webhookSecret();
  let emulator: TelegramEmulator;
  let install: TestInstall;
  let ingress: IngressInstance;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    install = new TestInstall({
      apiBase: emulator.apiRoot,
      bots: [
        {
          id: 'shop',
          mode: 'webhook',
          token: bot.token,
          default: true,
          webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret },
        },
      ],
      routes: [{ name: 'all' }],
    });
    await install.ready();
    ingress = await install.start();
  });

  afterAll(async () => {
    await install.cleanup();
    await emulator.stop();
  });

  it.each(['/webhooks/telegram/shop', '/webhooks/telegram'])(
    'POST %s answers 400',
    async (path) => {
      const res = await request(`${ingress.url}${path}`, {
        method: 'POST',
        headers: { 'x-telegram-bot-api-secret-token': secret },
      });
      expect(res.statusCode).toBe(400);
      expect(await res.body.json()).toEqual({ error: 'body is empty: expected a Telegram Update' });
      expect(ingress.logs.filter((line) => line.level === 'error')).toEqual([]);
      expect(await install.lanesOf('all')).toEqual([]);
    },
  );
});
