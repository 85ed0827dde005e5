import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { inspect } from 'node:util';
import { stringify } from 'yaml';
import type { RelaygramConfig } from './config.types';
import { ConfigError, defaultConfigPath, loadConfig, loadConfigOrThrow } from './loader';
import { Secret } from './secret';

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-loader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function writeConfig(text: string): string {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(file, text);
  return file;
}

const botId = randomInt(100_000, 9_999_999_999);
const ENV: NodeJS.ProcessEnv = {
  SOL_TOKEN: `${botId}:${randomBytes(27).toString('base64url')}`,
  SHOP_TOKEN: `${botId + 1}:${randomBytes(27).toString('base64url')}`,
  HOOK_SECRET: randomBytes(24).toString('base64url'),
  SITE_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
  SITE_TOKEN: randomBytes(24).toString('base64url'),
  SITE_TG_SECRET: randomBytes(24).toString('base64url'),
  CLIENT_TOKEN: randomBytes(24).toString('base64url'),
};

function load(config: object, env: NodeJS.ProcessEnv = ENV, noEnv = false): RelaygramConfig {
  return loadConfigOrThrow({ path: writeConfig(stringify(config)), env, noEnv });
}

const minimal = {
  bots: [{ id: 'sol-prod', token_env: 'SOL_TOKEN', mode: 'polling' }],
  routes: [
    { name: 'site', target_url: 'https://site.example/updates', service_token_env: 'SITE_TOKEN' },
  ],
  clients: [{ name: 'site', token_env: 'CLIENT_TOKEN', bots: ['sol-prod'] }],
};

const full = {
  redis: {
    url: 'rediss://cache.internal:6380/2',
    prefix: '{relay}',
    wait_replicas: 1,
    wait_timeout: '250ms',
  },
  telegram: { api_base: 'http://bot-api.internal:8081/' },
  bots: [
    {
      id: 'sol-prod',
      token_env: 'SOL_TOKEN',
      mode: 'polling',
      allowed_updates: ['message', 'message', 'chat_member'],
    },
    {
      id: 'shop',
      token_env: 'SHOP_TOKEN',
      username: 'shop_bot',
      mode: 'webhook',
      default: true,
      webhook: {
        url: 'https://relay.example/webhooks/telegram/shop',
        secret_token_env: 'HOOK_SECRET',
        max_connections: 10,
        manage: false,
      },
      outbound: {
        enabled: true,
        per_second: 100,
        per_chat_per_second: 0.5,
        chat_burst: 5,
        per_group_per_minute: 40,
        max_wait: '30s',
        broadcast_share: 0.5,
      },
    },
  ],
  routes: [
    {
      name: 'site',
      bots: ['shop'],
      target_url: 'https://site.example/updates',
      match: {
        update_types: ['message'],
        user_ids: [1, 2],
        chat_ids: [-1001234567890],
        commands: ['/Admin', '/admin', '/orders'],
        callback_prefixes: ['order:'],
      },
      format: 'envelope',
      ordering: 'strict',
      concurrency: 4,
      timeout: 30,
      signing_secret_env: 'SITE_SECRET',
      signature: 'standard-webhooks',
      service_token_env: 'SITE_TOKEN',
      telegram_secret_token_env: 'SITE_TG_SECRET',
      webhook_reply: false,
      retry: { max_age: '7d', backoff_cap: '1m', max_consecutive_5xx: 3 },
    },
  ],
  clients: [
    {
      name: 'site',
      token_env: 'CLIENT_TOKEN',
      bots: ['shop', 'sol-prod'],
      methods: ['sendMessage', 'SendPhoto'],
      broadcast: true,
    },
  ],
  delivery_log: {
    enabled: false,
    attempts_per_route: 100,
    updates_per_bot: 1_000_000,
    max_age: '90m',
  },
};

describe('loadConfig defaults', () => {
  it('fills every key the file leaves out', () => {
    const config = load(minimal);
    expect(config.redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      prefix: 'relaygram',
      waitReplicas: 0,
      waitTimeoutMs: 500,
    });
    expect(config.telegram).toEqual({ apiBase: 'https://api.telegram.org' });
    expect(config.bots).toEqual([
      {
        id: 'sol-prod',
        tokenEnv: 'SOL_TOKEN',
        token: expect.any(Secret),
        numericId: String(botId),
        mode: 'polling',
        allowedUpdates: ['message', 'callback_query'],
        default: true,
        outbound: {
          enabled: true,
          perSecond: 30,
          perChatPerSecond: 1,
          chatBurst: 3,
          perGroupPerMinute: 20,
          maxWaitMs: 5_000,
          broadcastShare: 0.8,
        },
      },
    ]);
    expect(config.routes).toEqual([
      {
        name: 'site',
        bots: ['sol-prod'],
        targetUrl: 'https://site.example/updates',
        format: 'update',
        ordering: 'chat',
        concurrency: 32,
        timeoutMs: 10_000,
        signature: 'relaygram-v1',
        serviceTokenEnv: 'SITE_TOKEN',
        serviceToken: expect.any(Secret),
        webhookReply: true,
        retry: { maxAgeMs: 86_400_000, backoffCapMs: 300_000, maxConsecutive5xx: 8 },
      },
    ]);
    expect(config.clients).toEqual([
      {
        name: 'site',
        tokenEnv: 'CLIENT_TOKEN',
        token: expect.any(Secret),
        bots: ['sol-prod'],
        broadcast: false,
      },
    ]);
    expect(config.deliveryLog).toEqual({
      enabled: true,
      attemptsPerRoute: 10_000,
      updatesPerBot: 10_000,
      maxAgeMs: 86_400_000,
    });
    expect(config.warnings).toEqual([]);
  });

  it('gives a delivery_log block its defaults', () => {
    const config = load({ ...minimal, delivery_log: { attempts_per_route: 500 } });
    expect(config.deliveryLog).toEqual({
      enabled: true,
      attemptsPerRoute: 500,
      updatesPerBot: 10_000,
      maxAgeMs: 86_400_000,
    });
  });

  it('gives a webhook block its defaults', () => {
    const config = load({
      bots: [
        {
          id: 'shop',
          token_env: 'SHOP_TOKEN',
          mode: 'webhook',
          webhook: { url: 'https://relay.example/hook', secret_token_env: 'HOOK_SECRET' },
        },
      ],
    });
    expect(config.bots[0].webhook).toEqual({
      url: 'https://relay.example/hook',
      secretTokenEnv: 'HOOK_SECRET',
      secretToken: expect.any(Secret),
      maxConnections: 40,
      manage: true,
      checkEveryMs: 60_000,
    });
    const checked = load({
      bots: [
        {
          id: 'shop',
          token_env: 'SHOP_TOKEN',
          mode: 'webhook',
          webhook: {
            url: 'https://relay.example/hook',
            secret_token_env: 'HOOK_SECRET',
            check_every: '5m',
          },
        },
      ],
    });
    expect(checked.bots[0].webhook?.checkEveryMs).toBe(300_000);
  });

  it('routes a route without bots to every bot', () => {
    const config = load({ ...full, routes: [{ ...minimal.routes[0] }] });
    expect(config.routes[0].bots).toEqual(['sol-prod', 'shop']);
  });

  it('makes no bot the default when there are several and none is marked', () => {
    const bots = full.bots.map((bot) => ({ ...bot, default: undefined }));
    expect(load({ ...full, bots }).bots.map((b) => b.default)).toEqual([false, false]);
  });

  it('respects an explicit default: false on the only bot', () => {
    const config = load({ ...minimal, bots: [{ ...minimal.bots[0], default: false }] });
    expect(config.bots[0].default).toBe(false);
  });

  it('treats an empty file and an empty bots key as no bots', () => {
    for (const text of ['', '# nothing yet\n', 'bots:\n', 'bots: []\nroutes:\nclients:\n']) {
      const result = loadConfig({ path: writeConfig(text), env: {} });
      expect(result).toMatchObject({ ok: true, config: { bots: [], routes: [], clients: [] } });
    }
  });
});

describe('loadConfig with every key set', () => {
  const config = load(full);

  it('keeps what the file says, in camelCase and milliseconds', () => {
    expect(config.redis).toEqual({
      url: 'rediss://cache.internal:6380/2',
      prefix: '{relay}',
      waitReplicas: 1,
      waitTimeoutMs: 250,
    });
    expect(config.telegram.apiBase).toBe('http://bot-api.internal:8081');
    expect(config.bots[0].allowedUpdates).toEqual(['message', 'chat_member']);
    expect(config.bots[0].default).toBe(false);
    expect(config.bots[1]).toMatchObject({
      username: 'shop_bot',
      default: true,
      numericId: String(botId + 1),
      webhook: { maxConnections: 10, manage: false },
      outbound: {
        enabled: true,
        perSecond: 100,
        perChatPerSecond: 0.5,
        chatBurst: 5,
        perGroupPerMinute: 40,
        maxWaitMs: 30_000,
        broadcastShare: 0.5,
      },
    });
    expect(config.routes[0]).toMatchObject({
      bots: ['shop'],
      match: {
        updateTypes: ['message'],
        userIds: [1, 2],
        chatIds: [-1001234567890],
        commands: ['/admin', '/orders'],
        callbackPrefixes: ['order:'],
      },
      format: 'envelope',
      ordering: 'strict',
      concurrency: 4,
      timeoutMs: 30_000,
      signingSecretEnv: 'SITE_SECRET',
      signature: 'standard-webhooks',
      telegramSecretTokenEnv: 'SITE_TG_SECRET',
      webhookReply: false,
      retry: { maxAgeMs: 604_800_000, backoffCapMs: 60_000, maxConsecutive5xx: 3 },
    });
    expect(config.clients[0].methods).toEqual(['sendmessage', 'sendphoto']);
    expect(config.deliveryLog).toEqual({
      enabled: false,
      attemptsPerRoute: 100,
      updatesPerBot: 1_000_000,
      maxAgeMs: 5_400_000,
    });
    expect(config.clients[0].bots).toEqual(['shop', 'sol-prod']);
    expect(config.clients[0].broadcast).toBe(true);
  });

  it('resolves each secret from its env var', () => {
    expect(config.bots[0].token.reveal()).toBe(ENV.SOL_TOKEN);
    expect(config.bots[1].webhook?.secretToken.reveal()).toBe(ENV.HOOK_SECRET);
    expect(config.routes[0].signingSecret?.reveal()).toBe(ENV.SITE_SECRET);
    expect(config.routes[0].serviceToken?.reveal()).toBe(ENV.SITE_TOKEN);
    expect(config.routes[0].telegramSecretToken?.reveal()).toBe(ENV.SITE_TG_SECRET);
    expect(config.clients[0].token.reveal()).toBe(ENV.CLIENT_TOKEN);
  });

  it('never shows a secret value when printed', () => {
    const printed = [JSON.stringify(config), inspect(config, { depth: 10 })];
    const secrets = Object.values(ENV).filter((v): v is string => typeof v === 'string');
    for (const text of printed) {
      for (const value of secrets) expect(text).not.toContain(value);
      // The names of the variables stay visible: they are what an operator needs.
      expect(text).toContain('SOL_TOKEN');
    }
    expect(`${config.bots[0].token}`).toBe('***');
  });

  it('is frozen all the way down', () => {
    expect(Object.isFrozen(config)).toBe(true);
    for (const part of [
      config.redis,
      config.bots,
      config.bots[1],
      config.bots[1].webhook,
      config.bots[0].allowedUpdates,
      config.routes[0].match,
      config.routes[0].match?.commands,
      config.routes[0].retry,
      config.clients[0].methods,
      config.warnings,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => {
      (config.routes[0].retry as { maxAgeMs: number }).maxAgeMs = 1;
    }).toThrow(TypeError);
    expect(() => (config.bots as unknown as unknown[]).push({})).toThrow(TypeError);
    expect(config.routes[0].retry.maxAgeMs).toBe(604_800_000);
  });

  it('records the absolute path it was loaded from', () => {
    const file = writeConfig(stringify(minimal));
    const relativePath = relative(process.cwd(), file);
    const loaded = loadConfigOrThrow({ path: relativePath, env: ENV });
    expect(loaded.source).toBe(file);
  });
});

describe('loadConfig environment', () => {
  it('lets REDIS_URL and TELEGRAM_API_BASE override the file', () => {
    const config = load(full, {
      ...ENV,
      REDIS_URL: 'redis://10.0.0.5:6379',
      TELEGRAM_API_BASE: 'http://127.0.0.1:8081/',
    });
    expect(config.redis.url).toBe('redis://10.0.0.5:6379');
    expect(config.redis.prefix).toBe('{relay}');
    expect(config.telegram.apiBase).toBe('http://127.0.0.1:8081');
  });

  it('ignores empty overrides', () => {
    const config = load(full, { ...ENV, REDIS_URL: '', TELEGRAM_API_BASE: '' });
    expect(config.redis.url).toBe('rediss://cache.internal:6380/2');
  });

  it('with noEnv reads no variable: empty secrets, no numeric id, no overrides', () => {
    const config = load(full, { REDIS_URL: 'not a url', SOL_TOKEN: 'not a token' }, true);
    expect(config.redis.url).toBe('rediss://cache.internal:6380/2');
    expect(config.bots.map((b) => [b.token.length, b.numericId])).toEqual([
      [0, ''],
      [0, ''],
    ]);
    expect(config.routes[0].signingSecret?.length).toBe(0);
    expect(config.clients[0].token.length).toBe(0);
  });

  it('with noEnv still finds two bots naming the same variable', () => {
    const bots = [full.bots[0], { ...full.bots[1], token_env: 'SOL_TOKEN' }];
    const result = loadConfig({ path: writeConfig(stringify({ bots })), env: {}, noEnv: true });
    expect(result).toEqual({
      ok: false,
      problems: ['bots[1].token_env: same bot token as bots[0].token_env'],
    });
  });

  it('reads process.env when no env is given', () => {
    const name = `RELAYGRAM_TEST_TOKEN_${randomInt(1_000_000)}`;
    const path = writeConfig(stringify({ bots: [{ ...minimal.bots[0], token_env: name }] }));
    expect(loadConfig({ path })).toEqual({
      ok: false,
      problems: [`bots[0].token_env: environment variable ${name} is not set`],
    });
    process.env[name] = ENV.SOL_TOKEN;
    try {
      expect(loadConfig({ path })).toMatchObject({ ok: true });
    } finally {
      delete process.env[name];
    }
  });
});

describe('loadConfig warnings', () => {
  it('warns about a route the target cannot authenticate', () => {
    const routes = [
      minimal.routes[0],
      { name: 'open', target_url: 'http://open.example/', signature: 'standard-webhooks' },
    ];
    expect(load({ ...minimal, routes }).warnings).toEqual([
      "routes[1]: no signing_secret_env, service_token_env or telegram_secret_token_env: the target cannot tell Relaygram's deliveries from anyone else's",
    ]);
  });

  it('warns about a matched update type none of the route bots subscribes to', () => {
    const routes = [
      { ...minimal.routes[0], match: { update_types: ['message', 'edited_message', 'poll'] } },
    ];
    expect(load({ ...minimal, routes }).warnings).toEqual([
      'routes[0].match.update_types[1]: no bot of this route has "edited_message" in allowed_updates, so the route never receives it',
      'routes[0].match.update_types[2]: no bot of this route has "poll" in allowed_updates, so the route never receives it',
    ]);
  });

  it('accepts an update type newer than this version, with a warning', () => {
    const bots = [{ ...minimal.bots[0], allowed_updates: ['message', 'future_update'] }];
    const config = load({ ...minimal, bots });
    expect(config.bots[0].allowedUpdates).toEqual(['message', 'future_update']);
    expect(config.warnings).toEqual([
      'bots[0].allowed_updates[1]: "future_update" is not an update type this version knows; it is passed to Telegram as is',
    ]);
  });

  it('says how to get started when there are no bots', () => {
    expect(load({}).warnings).toEqual([
      'bots: none configured: Relaygram runs but receives nothing. Add a bot as in config/relaygram.example.yaml, or try `npm run demo`',
    ]);
  });
});

describe('loadConfigOrThrow', () => {
  it('throws a ConfigError listing every problem', () => {
    const path = writeConfig('bots:\n  - id: x\n');
    let thrown: unknown;
    try {
      loadConfigOrThrow({ path, env: ENV });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems).toEqual([
      'bots[0].token_env: required',
      'bots[0].mode: required',
    ]);
    expect((thrown as ConfigError).message).toBe(
      'invalid configuration:\n  bots[0].token_env: required\n  bots[0].mode: required',
    );
  });
});

describe('defaultConfigPath', () => {
  it('is RELAYGRAM_CONFIG when set, else config/relaygram.yaml', () => {
    expect(defaultConfigPath({ RELAYGRAM_CONFIG: '/etc/relaygram.yaml' })).toBe(
      '/etc/relaygram.yaml',
    );
    expect(defaultConfigPath({ RELAYGRAM_CONFIG: '' })).toBe('config/relaygram.yaml');
    expect(defaultConfigPath({})).toBe('config/relaygram.yaml');
  });
});
