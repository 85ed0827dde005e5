import type { BotConfig, RelaygramConfig } from '@relaygram/config';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendJson, startFakeTelegram } from '../test/fake-telegram.server';
import { testSecret } from '../test/test-secret';
import type { TelegramClient } from './telegram-client';
import { TelegramClients } from './telegram-clients';

const TOKENS = {
  sol: '7123456789:AAHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF',
  shop: '6234567890:BBHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF',
  shopRotated: '6234567890:CCHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF',
  admin: '5345678901:DDHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF',
};

function bot(id: string, token: string, numericId = token.split(':')[0]): BotConfig {
  return {
    id,
    tokenEnv: `${id.toUpperCase()}_TOKEN`,
    token: testSecret(token),
    numericId,
    mode: 'polling',
    allowedUpdates: ['message'],
    default: false,
  };
}

function config(bots: BotConfig[], apiBase = 'http://127.0.0.1:8081'): RelaygramConfig {
  return {
    redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram', waitReplicas: 0, waitTimeoutMs: 500 },
    telegram: { apiBase },
    bots,
    routes: [],
    clients: [],
    warnings: [],
    source: 'test.yaml',
  };
}

describe('TelegramClients', () => {
  let clients: TelegramClients;

  afterEach(async () => {
    await clients.closeAll();
  });

  it('builds one client per bot, found by config id and by numeric id', () => {
    clients = new TelegramClients(
      config([bot('sol-prod', TOKENS.sol), bot('shop-bot', TOKENS.shop, '')]),
    );

    const sol = clients.get('sol-prod');
    expect(sol?.botId).toBe('sol-prod');
    expect(clients.get('shop-bot')?.botId).toBe('shop-bot');
    expect(clients.get('nope')).toBeUndefined();
    expect(clients.getByNumericId('7123456789')).toBe(sol);
    expect(clients.getByNumericId(7123456789)).toBe(sol);
    // numericId '' (not known to config) falls back to the token's own prefix.
    expect(clients.getByNumericId('6234567890')).toBe(clients.get('shop-bot'));
    expect(clients.ids()).toEqual(['sol-prod', 'shop-bot']);
  });

  it('keeps unchanged clients on replace and closes the replaced and removed ones', async () => {
    clients = new TelegramClients(
      config([
        bot('sol-prod', TOKENS.sol),
        bot('shop-bot', TOKENS.shop),
        bot('admin', TOKENS.admin),
      ]),
    );
    const before = new Map(clients.ids().map((id) => [id, clients.get(id) as TelegramClient]));

    await clients.replace(
      config([
        bot('sol-prod', TOKENS.sol),
        bot('shop-bot', TOKENS.shopRotated),
        bot('new-bot', '4456789012:EEHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF'),
      ]),
    );

    expect(clients.get('sol-prod')).toBe(before.get('sol-prod'));
    expect(before.get('sol-prod')?.closed).toBe(false);
    expect(clients.get('shop-bot')).not.toBe(before.get('shop-bot'));
    expect(clients.get('shop-bot')?.closed).toBe(false);
    expect(before.get('shop-bot')?.closed).toBe(true);
    expect(clients.get('admin')).toBeUndefined();
    expect(before.get('admin')?.closed).toBe(true);
    expect(clients.getByNumericId('5345678901')).toBeUndefined();
    expect(clients.get('new-bot')?.closed).toBe(false);
  });

  it('lets a replaced client finish its in-flight call before closing it', async () => {
    const tg = await startFakeTelegram(async (_seen, _req, res) => {
      await sleep(150);
      sendJson(res, 200, { ok: true, result: 'answered' });
    });
    try {
      clients = new TelegramClients(config([bot('shop-bot', TOKENS.shop)], tg.url));
      const old = clients.get('shop-bot') as TelegramClient;
      const inFlight = old.call('getMe');
      await sleep(30);

      const replaced = clients.replace(config([bot('shop-bot', TOKENS.shopRotated)], tg.url));

      await expect(inFlight).resolves.toBe('answered');
      await replaced;
      expect(old.closed).toBe(true);
      expect(tg.requests.map((r) => r.pathname)).toEqual([`/bot${TOKENS.shop}/getMe`]);
    } finally {
      await clients.closeAll();
      await tg.close();
    }
  });

  it('replaces every client when apiBase changes', async () => {
    clients = new TelegramClients(config([bot('sol-prod', TOKENS.sol)]));
    const before = clients.get('sol-prod');

    await clients.replace(config([bot('sol-prod', TOKENS.sol)], 'http://127.0.0.1:9090/tg'));

    expect(clients.get('sol-prod')).not.toBe(before);
    expect(before?.closed).toBe(true);
  });

  it('refuses a config with an unusable token and keeps the old clients', async () => {
    clients = new TelegramClients(config([bot('sol-prod', TOKENS.sol)]));
    const before = clients.get('sol-prod');

    await expect(
      clients.replace(config([bot('shop-bot', TOKENS.shop), bot('bad', 'has spaces: x')])),
    ).rejects.toThrow('bot token');

    expect(clients.get('sol-prod')).toBe(before);
    expect(before?.closed).toBe(false);
    expect(clients.get('shop-bot')).toBeUndefined();
  });

  it('closeAll closes every client and empties the registry', async () => {
    clients = new TelegramClients(
      config([bot('sol-prod', TOKENS.sol), bot('shop-bot', TOKENS.shop)]),
    );
    const all = clients.ids().map((id) => clients.get(id) as TelegramClient);

    await clients.closeAll();

    expect(all.every((c) => c.closed)).toBe(true);
    expect(clients.get('sol-prod')).toBeUndefined();
    expect(clients.getByNumericId('7123456789')).toBeUndefined();
  });
});
