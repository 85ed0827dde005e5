import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from './loader';

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-mistakes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function writeConfig(text: string): string {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(file, text);
  return file;
}

const botToken = (): string =>
  `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`;
const secret = (): string => randomBytes(24).toString('base64url');

const ENV: NodeJS.ProcessEnv = {
  SOL_TOKEN: botToken(),
  SHOP_TOKEN: botToken(),
  HOOK_SECRET: secret(),
  SITE_SECRET: secret(),
  SITE_TOKEN: secret(),
  ADMIN_TOKEN_X: secret(),
};

const solBot = { id: 'sol-prod', token_env: 'SOL_TOKEN', mode: 'polling' };
const shopBot = {
  id: 'shop',
  token_env: 'SHOP_TOKEN',
  mode: 'webhook',
  webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret_token_env: 'HOOK_SECRET' },
};
const route = {
  name: 'site',
  bots: ['sol-prod'],
  target_url: 'https://site.example/updates',
  signing_secret_env: 'SITE_SECRET',
};
const client = { name: 'site', token_env: 'SITE_TOKEN', bots: ['sol-prod'] };

/** A valid config with two bots, a route and a client; a case overrides one part. */
function doc(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { bots: [solBot, shopBot], routes: [route], clients: [client], ...overrides };
}

function problemsOf(text: string, env: NodeJS.ProcessEnv = ENV): string[] {
  const result = loadConfig({ path: writeConfig(text), env });
  if (result.ok) throw new Error('expected the config to be refused');
  return result.problems;
}

describe('loadConfig: the base document of these cases', () => {
  it('is valid, so each case below fails for its own mistake only', () => {
    const result = loadConfig({ path: writeConfig(stringify(doc())), env: ENV });
    expect(result).toMatchObject({ ok: true });
  });
});

describe('loadConfig: one mistake, one line naming its YAML path', () => {
  const cases: Array<{ mistake: string; config: object; env?: NodeJS.ProcessEnv; line: string }> = [
    {
      mistake: 'an unknown key in a bot',
      config: doc({ bots: [{ ...solBot, tokn: 'SOL_TOKEN' }] }),
      line: 'bots[0].tokn: unknown key',
    },
    {
      mistake: 'an unknown top-level key',
      config: doc({ route: [] }),
      line: 'route: unknown key',
    },
    {
      mistake: 'an unknown match key',
      config: doc({ routes: [{ ...route, match: { user: [1] } }] }),
      line: 'routes[0].match.user: unknown key',
    },
    {
      mistake: 'a target URL that is not http(s)',
      config: doc({ routes: [{ ...route, target_url: 'ftp://site.example/updates' }] }),
      line: 'routes[0].target_url: must be an http or https URL',
    },
    {
      mistake: 'credentials in a target URL',
      config: doc({ routes: [{ ...route, target_url: 'https://bob:pw@site.example/updates' }] }),
      line: 'routes[0].target_url: must not contain a user name or password; use service_token_env',
    },
    {
      mistake: 'a missing target URL',
      config: doc({ routes: [{ name: 'site', signing_secret_env: 'SITE_SECRET' }] }),
      line: 'routes[0].target_url: required, or pull: { client: <client name> } for a pull route',
    },
    {
      mistake: 'a concurrency out of range',
      config: doc({ routes: [{ ...route, concurrency: 0 }] }),
      line: 'routes[0].concurrency: must be an integer from 1 to 1000',
    },
    {
      mistake: 'a concurrency written as a string',
      config: doc({ routes: [{ ...route, concurrency: '32' }] }),
      line: 'routes[0].concurrency: must be an integer from 1 to 1000',
    },
    {
      mistake: 'a duration in words',
      config: doc({ routes: [{ ...route, retry: { max_age: '1 day' } }] }),
      line: 'routes[0].retry.max_age: must be a duration like 500ms, 30s, 5m, 24h, 7d or a number of seconds',
    },
    {
      mistake: 'a timeout above 5m',
      config: doc({ routes: [{ ...route, timeout: '10m' }] }),
      line: 'routes[0].timeout: must be from 1s to 5m',
    },
    {
      mistake: 'max_consecutive_5xx of 0',
      config: doc({ routes: [{ ...route, retry: { max_consecutive_5xx: 0 } }] }),
      line: 'routes[0].retry.max_consecutive_5xx: must be an integer from 1 to 1000',
    },
    {
      mistake: 'outbound written as a number',
      config: doc({ bots: [{ ...solBot, outbound: 30 }, shopBot] }),
      line: 'bots[0].outbound: must be a mapping',
    },
    {
      mistake: 'an unknown outbound key',
      config: doc({ bots: [{ ...solBot, outbound: { per_minute: 30 } }, shopBot] }),
      line: 'bots[0].outbound.per_minute: unknown key',
    },
    {
      mistake: 'a per_second of 0',
      config: doc({ bots: [{ ...solBot, outbound: { per_second: 0 } }, shopBot] }),
      line: 'bots[0].outbound.per_second: must be a number above 0 and at most 100000',
    },
    {
      mistake: 'a per_chat_per_second written as a string',
      config: doc({ bots: [{ ...solBot, outbound: { per_chat_per_second: '1' } }, shopBot] }),
      line: 'bots[0].outbound.per_chat_per_second: must be a number above 0 and at most 100000',
    },
    {
      mistake: 'a fractional chat_burst',
      config: doc({ bots: [shopBot, { ...solBot, outbound: { chat_burst: 2.5 } }] }),
      line: 'bots[1].outbound.chat_burst: must be an integer from 1 to 100000',
    },
    {
      mistake: 'a per_group_per_minute of 0',
      config: doc({ bots: [{ ...solBot, outbound: { per_group_per_minute: 0 } }, shopBot] }),
      line: 'bots[0].outbound.per_group_per_minute: must be an integer from 1 to 100000',
    },
    {
      mistake: 'a delivery_log that is not a mapping',
      config: doc({ delivery_log: true }),
      line: 'delivery_log: must be a mapping',
    },
    {
      mistake: 'an unknown key in delivery_log',
      config: doc({ delivery_log: { max_entries: 5 } }),
      line: 'delivery_log.max_entries: unknown key',
    },
    {
      mistake: 'a delivery_log enabled that is not a boolean',
      config: doc({ delivery_log: { enabled: 'yes' } }),
      line: 'delivery_log.enabled: must be true or false',
    },
    {
      mistake: 'an attempts_per_route below 100',
      config: doc({ delivery_log: { attempts_per_route: 99 } }),
      line: 'delivery_log.attempts_per_route: must be an integer from 100 to 1000000',
    },
    {
      mistake: 'a fractional updates_per_bot',
      config: doc({ delivery_log: { updates_per_bot: 1000.5 } }),
      line: 'delivery_log.updates_per_bot: must be an integer from 100 to 1000000',
    },
    {
      mistake: 'an updates_per_bot above a million',
      config: doc({ delivery_log: { updates_per_bot: 1_000_001 } }),
      line: 'delivery_log.updates_per_bot: must be an integer from 100 to 1000000',
    },
    {
      mistake: 'a delivery_log max_age above a day',
      config: doc({ delivery_log: { max_age: '25h' } }),
      line: 'delivery_log.max_age: must be from 1m to 1d',
    },
    {
      mistake: 'a delivery_log max_age below a minute',
      config: doc({ delivery_log: { max_age: '30s' } }),
      line: 'delivery_log.max_age: must be from 1m to 1d',
    },
    {
      mistake: 'a max_wait above a minute',
      config: doc({ bots: [{ ...solBot, outbound: { max_wait: '2m' } }, shopBot] }),
      line: 'bots[0].outbound.max_wait: must be from 0s to 1m',
    },
    {
      mistake: 'a max_wait in microseconds',
      config: doc({ bots: [{ ...solBot, outbound: { max_wait: '500us' } }, shopBot] }),
      line: 'bots[0].outbound.max_wait: must be a duration like 500ms, 30s, 5m, 24h, 7d or a number of seconds',
    },
    {
      mistake: 'a wait_replicas above five',
      config: doc({ redis: { wait_replicas: 6 } }),
      line: 'redis.wait_replicas: must be an integer from 0 to 5',
    },
    {
      mistake: 'a wait_timeout the webhook connection could not afford',
      config: doc({ redis: { wait_timeout: '1s' } }),
      line: 'redis.wait_timeout: must be from 10ms to 800ms',
    },
    {
      mistake: 'a webhook check_every above a day',
      config: doc({
        bots: [solBot, { ...shopBot, webhook: { ...shopBot.webhook, check_every: '2d' } }],
      }),
      line: 'bots[1].webhook.check_every: must be from 1s to 1d',
    },
    {
      mistake: 'a broadcast_share above 1',
      config: doc({ bots: [{ ...solBot, outbound: { broadcast_share: 1.5 } }, shopBot] }),
      line: 'bots[0].outbound.broadcast_share: must be a number from 0 to 1',
    },
    {
      mistake: 'outbound.enabled as a word',
      config: doc({ bots: [{ ...solBot, outbound: { enabled: 'off' } }, shopBot] }),
      line: 'bots[0].outbound.enabled: must be true or false',
    },
    {
      mistake: 'an unknown format',
      config: doc({ routes: [{ ...route, format: 'json' }] }),
      line: 'routes[0].format: must be update or envelope',
    },
    {
      mistake: 'an unknown ordering',
      config: doc({ routes: [{ ...route, ordering: 'fifo' }] }),
      line: 'routes[0].ordering: must be chat, strict or none',
    },
    {
      mistake: 'an unknown signature scheme',
      config: doc({ routes: [{ ...route, signature: 'hmac' }] }),
      line: 'routes[0].signature: must be relaygram-v1 or standard-webhooks',
    },
    {
      mistake: 'a YAML 1.1 boolean',
      config: doc({ routes: [{ ...route, webhook_reply: 'yes' }] }),
      line: 'routes[0].webhook_reply: must be true or false',
    },
    {
      mistake: 'a client broadcast flag as a word',
      config: doc({ clients: [{ ...client, broadcast: 'yes' }] }),
      line: 'clients[0].broadcast: must be true or false',
    },
    {
      mistake: 'a route name with capitals',
      config: doc({ routes: [{ ...route, name: 'Site' }] }),
      line: 'routes[0].name: must be 1-64 characters of a-z, 0-9 and -',
    },
    {
      mistake: 'a route naming an unknown bot',
      config: doc({ routes: [{ ...route, bots: ['sol-prod', 'shopp'] }] }),
      line: 'routes[0].bots[1]: unknown bot "shopp"',
    },
    {
      mistake: 'a route with an empty bots list',
      config: doc({ routes: [{ ...route, bots: [] }] }),
      line: 'routes[0].bots: must list at least one bot; leave the key out for every bot',
    },
    {
      mistake: 'a command without its slash',
      config: doc({ routes: [{ ...route, match: { commands: ['/start', 'admin'] } }] }),
      line: 'routes[0].match.commands[1]: must be a slash and 1-32 letters, digits or _, like /start',
    },
    {
      mistake: 'a user id that is not an integer',
      config: doc({ routes: [{ ...route, match: { user_ids: [42, '43'] } }] }),
      line: 'routes[0].match.user_ids[1]: must be an integer (a Telegram user or chat id)',
    },
    {
      mistake: 'an empty match list',
      config: doc({ routes: [{ ...route, match: { chat_ids: [] } }] }),
      line: 'routes[0].match.chat_ids: must not be empty; leave the key out to match every value',
    },
    {
      mistake: 'an empty callback prefix',
      config: doc({ routes: [{ ...route, match: { callback_prefixes: [''] } }] }),
      line: 'routes[0].match.callback_prefixes[0]: must be a non-empty string',
    },
    {
      mistake: 'a duplicate route name',
      config: doc({ routes: [route, { ...route, target_url: 'https://other.example/' }] }),
      line: 'routes[1].name: "site" is already the name of routes[0]',
    },
    {
      mistake: 'a duplicate bot id',
      config: doc({ bots: [solBot, { ...shopBot, id: 'sol-prod' }] }),
      line: 'bots[1].id: "sol-prod" is already the id of bots[0]',
    },
    {
      mistake: 'a missing bot mode',
      config: doc({ bots: [{ id: 'sol-prod', token_env: 'SOL_TOKEN' }, shopBot] }),
      line: 'bots[0].mode: required',
    },
    {
      mistake: 'an unknown bot mode',
      config: doc({ bots: [{ ...solBot, mode: 'push' }, shopBot] }),
      line: 'bots[0].mode: must be polling or webhook',
    },
    {
      mistake: 'a webhook bot without its webhook block',
      config: doc({ bots: [solBot, { ...shopBot, webhook: undefined }] }),
      line: 'bots[1].webhook: required when mode is webhook',
    },
    {
      mistake: 'a polling bot with a webhook block',
      config: doc({ bots: [{ ...solBot, webhook: shopBot.webhook }, shopBot] }),
      line: 'bots[0].webhook: only allowed when mode is webhook',
    },
    {
      mistake: 'max_connections above 100',
      config: doc({
        bots: [solBot, { ...shopBot, webhook: { ...shopBot.webhook, max_connections: 101 } }],
      }),
      line: 'bots[1].webhook.max_connections: must be an integer from 1 to 100',
    },
    {
      mistake: 'an allowed update type in capitals',
      config: doc({ bots: [{ ...solBot, allowed_updates: ['Message'] }, shopBot] }),
      line: 'bots[0].allowed_updates[0]: must be an update type of a-z and _, like message or callback_query',
    },
    {
      mistake: 'a username with @',
      config: doc({ bots: [{ ...solBot, username: '@sol_bot' }, shopBot] }),
      line: 'bots[0].username: must be a Telegram username: 5-32 letters, digits or _, without @',
    },
    {
      mistake: 'two default bots',
      config: doc({
        bots: [
          { ...solBot, default: true },
          { ...shopBot, default: true },
        ],
      }),
      line: 'bots[1].default: only one bot may be the default, and bots[0] already is',
    },
    {
      mistake: 'an env var name in lower case',
      config: doc({ bots: [{ ...solBot, token_env: 'sol_token' }, shopBot] }),
      line: 'bots[0].token_env: must be the name of an environment variable: A-Z, 0-9 and _, not starting with a digit',
    },
    {
      mistake: 'an env var that is not set',
      config: doc({ bots: [{ ...solBot, token_env: 'SOL_PROD_BOT_TOKEN' }, shopBot] }),
      line: 'bots[0].token_env: environment variable SOL_PROD_BOT_TOKEN is not set',
    },
    {
      mistake: 'an env var that is empty',
      config: doc(),
      env: { ...ENV, SITE_SECRET: '' },
      line: 'routes[0].signing_secret_env: environment variable SITE_SECRET is set but empty',
    },
    {
      mistake: 'a bot token of the wrong form',
      config: doc(),
      env: { ...ENV, SOL_TOKEN: 'not-a-bot-token-but-long-enough-to-pass-a-length-test' },
      line: 'bots[0].token_env: environment variable SOL_TOKEN does not hold a bot token (digits, a colon, then at least 30 letters, digits, _ or -)',
    },
    {
      mistake: 'two bots with the same token',
      config: doc(),
      env: { ...ENV, SHOP_TOKEN: ENV.SOL_TOKEN },
      line: 'bots[1].token_env: same bot token as bots[0].token_env',
    },
    {
      mistake: 'two bots whose tokens share the bot number',
      config: doc(),
      env: { ...ENV, SHOP_TOKEN: `${ENV.SOL_TOKEN!.split(':')[0]}:${'B'.repeat(35)}` },
      line: "bots[1].token_env: its token's bot number is also the one of bots[0].token_env; each bot needs its own (the Bot API drop-in tells bots apart by it)",
    },
    {
      mistake: 'a webhook secret Telegram would refuse',
      config: doc(),
      env: { ...ENV, HOOK_SECRET: 'has spaces in it' },
      line: 'bots[1].webhook.secret_token_env: environment variable HOOK_SECRET must hold 1-256 characters of A-Z, a-z, 0-9, _ and -',
    },
    {
      mistake: 'a short relaygram-v1 signing secret',
      config: doc(),
      env: { ...ENV, SITE_SECRET: 'short' },
      line: 'routes[0].signing_secret_env: environment variable SITE_SECRET must hold at least 16 characters',
    },
    {
      mistake: 'a standard-webhooks secret without whsec_',
      config: doc({ routes: [{ ...route, signature: 'standard-webhooks' }] }),
      line: 'routes[0].signing_secret_env: environment variable SITE_SECRET must hold whsec_ and the base64 of at least 16 bytes (signature: standard-webhooks)',
    },
    {
      mistake: 'a standard-webhooks secret of too few bytes',
      config: doc({ routes: [{ ...route, signature: 'standard-webhooks' }] }),
      env: { ...ENV, SITE_SECRET: `whsec_${randomBytes(8).toString('base64')}` },
      line: 'routes[0].signing_secret_env: environment variable SITE_SECRET must hold whsec_ and the base64 of at least 16 bytes (signature: standard-webhooks)',
    },
    {
      mistake: 'a service token that would break its header',
      config: doc({ routes: [{ ...route, service_token_env: 'ADMIN_TOKEN_X' }] }),
      env: { ...ENV, ADMIN_TOKEN_X: 'two words' },
      line: 'routes[0].service_token_env: environment variable ADMIN_TOKEN_X must hold visible ASCII characters only (it is sent as the X-Service-Token header)',
    },
    {
      mistake: 'a duplicate client name',
      config: doc({ clients: [client, { ...client, token_env: 'ADMIN_TOKEN_X' }] }),
      line: 'clients[1].name: "site" is already the name of clients[0]',
    },
    {
      mistake: 'two clients with the same token under different variables',
      config: doc({ clients: [client, { ...client, name: 'admin', token_env: 'ADMIN_TOKEN_X' }] }),
      env: { ...ENV, ADMIN_TOKEN_X: ENV.SITE_TOKEN },
      line: 'clients[1].token_env: same token as clients[0].token_env; client tokens must be unique',
    },
    {
      mistake: 'a client token too short to be safe',
      config: doc(),
      env: { ...ENV, SITE_TOKEN: 'abc' },
      line: 'clients[0].token_env: environment variable SITE_TOKEN must hold at least 16 characters of A-Z, a-z, 0-9, _ and - (it is also part of Bot API drop-in URLs)',
    },
    {
      mistake: 'a client without bots',
      config: doc({ clients: [{ name: 'site', token_env: 'SITE_TOKEN' }] }),
      line: 'clients[0].bots: required',
    },
    {
      mistake: 'a client naming an unknown bot',
      config: doc({ clients: [{ ...client, bots: ['sol'] }] }),
      line: 'clients[0].bots[0]: unknown bot "sol"',
    },
    {
      mistake: 'a reserved method in a client allow-list',
      config: doc({ clients: [{ ...client, methods: ['sendMessage', 'getUpdates'] }] }),
      line: 'clients[0].methods[1]: getUpdates is reserved by the gateway: no client may call it',
    },
    {
      mistake: 'a method name with a slash',
      config: doc({ clients: [{ ...client, methods: ['messages/send'] }] }),
      line: 'clients[0].methods[0]: must be a Bot API method name of letters only, like sendMessage',
    },
    {
      mistake: 'a redis URL of another scheme',
      config: doc({ redis: { url: 'http://127.0.0.1:6379' } }),
      line: 'redis.url: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL',
    },
    {
      mistake: 'a Redis Cluster URL with a database path',
      config: doc({ redis: { url: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000/0' } }),
      line: 'redis.url: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL; a Redis Cluster has no databases, so no path',
    },
    {
      mistake: 'a Sentinel URL without the master name',
      config: doc({ redis: { url: 'redis+sentinel://:hunter2@10.0.0.1:26379' } }),
      line: 'redis.url: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL; redis+sentinel:// needs the master name as its path, like /mymaster or /mymaster/0',
    },
    {
      mistake: 'a redis prefix with a colon',
      config: doc({ redis: { prefix: 'relay:gram' } }),
      line: 'redis.prefix: must be 1-64 letters, digits, _, . or -, optionally in braces as a Redis Cluster hash tag like {relaygram}',
    },
    {
      mistake: 'a bad REDIS_URL override',
      config: doc(),
      env: { ...ENV, REDIS_URL: 'localhost:6379' },
      line: 'REDIS_URL: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL (it overrides redis.url)',
    },
    {
      mistake: 'a bad TELEGRAM_API_BASE override',
      config: doc(),
      env: { ...ENV, TELEGRAM_API_BASE: 'api.telegram.org' },
      line: 'TELEGRAM_API_BASE: must be an http or https URL (it overrides telegram.api_base)',
    },
    {
      mistake: 'an api_base that is not a URL',
      config: doc({ telegram: { api_base: 'telegram' } }),
      line: 'telegram.api_base: must be an http or https URL',
    },
    {
      mistake: 'bots written as a mapping',
      config: doc({ bots: { 'sol-prod': solBot }, routes: [], clients: [] }),
      line: 'bots: must be a list',
    },
    {
      mistake: 'a route that is not a mapping',
      config: doc({ routes: ['site'] }),
      line: 'routes[0]: must be a mapping',
    },
    {
      mistake: 'a match that is a list',
      config: doc({ routes: [{ ...route, match: [{ commands: ['/start'] }] }] }),
      line: 'routes[0].match: must be a mapping',
    },
  ];

  it.each(cases)('$mistake', ({ config, env, line }) => {
    expect(problemsOf(stringify(config), env)).toEqual([line]);
  });

  it('covers many distinct mistakes', () => {
    expect(new Set(cases.map((c) => c.line)).size).toBeGreaterThanOrEqual(40);
  });
});

describe('loadConfig: mistakes in the file itself', () => {
  it('names file, line and column of a duplicate key', () => {
    const file = writeConfig('redis:\n  url: redis://a:6379\n  url: redis://b:6379\n');
    const result = loadConfig({ path: file, env: ENV });
    expect(result).toEqual({ ok: false, problems: [`${file}:3:3: Map keys must be unique`] });
  });

  it('names file, line and column of a syntax error, without the source text', () => {
    const file = writeConfig('bots:\n  - id: sol-prod\n    mode: [polling\n');
    const result = loadConfig({ path: file, env: ENV });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.length).toBeGreaterThan(0);
    for (const line of problems) {
      expect(line).toMatch(new RegExp(`^${escape(file)}:\\d+:\\d+: [^\\n]+$`));
    }
  });

  it('reports an alias to an anchor that does not exist', () => {
    const file = writeConfig('bots: *missing\n');
    const result = loadConfig({ path: file, env: ENV });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems).toEqual([
      expect.stringMatching(new RegExp(`^${escape(file)}(:\\d+:\\d+)?: .*missing`)),
    ]);
  });

  it('refuses an alias into its own ancestor', () => {
    const file = writeConfig('routes: &loop\n  - match: *loop\n');
    expect(loadConfig({ path: file, env: ENV })).toEqual({
      ok: false,
      problems: [`${file}: an alias refers to a node that contains it`],
    });
  });

  it('refuses keys named like Object members, which no schema key is', () => {
    const text = 'constructor: 1\nbots:\n  - __proto__: { id: x }\n    toString: y\n';
    expect(problemsOf(text)).toEqual([
      'constructor: unknown key',
      'bots[0].__proto__: unknown key',
      'bots[0].toString: unknown key',
      'bots[0].id: required',
      'bots[0].token_env: required',
      'bots[0].mode: required',
    ]);
  });

  it('refuses values that only YAML tags can make', () => {
    const text = 'bots: !!set { a, b }\nroutes:\n  - name: !!binary aGVsbG8=\n';
    expect(problemsOf(text)).toEqual([
      'bots: a YAML tag like !!binary, !!set or !!omap cannot be used in a config',
      'routes[0].name: a YAML tag like !!binary, !!set or !!omap cannot be used in a config',
      'routes[0].target_url: required, or pull: { client: <client name> } for a pull route',
    ]);
  });

  it('refuses a second YAML document', () => {
    const file = writeConfig('bots: []\n---\nroutes: []\n');
    expect(loadConfig({ path: file, env: ENV })).toEqual({
      ok: false,
      problems: [`${file}:2:1: a config file holds one YAML document; remove the second ---`],
    });
  });

  it('refuses a document that is not a mapping', () => {
    const file = writeConfig('- bots\n- routes\n');
    expect(loadConfig({ path: file, env: ENV })).toEqual({
      ok: false,
      problems: [
        `${file}: must be a mapping with the keys redis, telegram, bots, routes, clients and delivery_log`,
      ],
    });
  });

  it('says when the file does not exist', () => {
    const file = join(dir, 'absent.yaml');
    expect(loadConfig({ path: file, env: ENV })).toEqual({
      ok: false,
      problems: [`${file}: no such file`],
    });
  });

  it('says when the path is a directory', () => {
    const sub = join(dir, 'a-directory.yaml');
    mkdirSync(sub);
    expect(loadConfig({ path: sub, env: ENV })).toEqual({
      ok: false,
      problems: [`${sub}: is a directory, not a file`],
    });
  });
});

describe('loadConfig: several mistakes', () => {
  it('reports them all at once, in file order', () => {
    const text = [
      'redis:',
      '  url: http://127.0.0.1:6379',
      'bots:',
      '  - id: sol-prod',
      '    tokn: SOL_TOKEN',
      '    mode: polling',
      '  - id: Shop',
      '    token_env: MISSING_TOKEN',
      '    mode: webhook',
      'routes:',
      '  - name: site',
      '    bots: [sol-prod, shop]',
      '    target_url: site.example/updates',
      '    concurrency: 5000',
      '    retry: { max_age: 2 days }',
      'clients:',
      '  - name: site',
      '    token_env: SITE_TOKEN',
      '    bots: [sol-prod]',
      '    methods: [setWebhook]',
      '',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'redis.url: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL',
      'bots[0].tokn: unknown key',
      'bots[0].token_env: required',
      'bots[1].id: must be 1-64 characters of a-z, 0-9 and -',
      'bots[1].token_env: environment variable MISSING_TOKEN is not set',
      'bots[1].webhook: required when mode is webhook',
      'routes[0].bots[1]: unknown bot "shop"',
      'routes[0].target_url: must be an http or https URL',
      'routes[0].concurrency: must be an integer from 1 to 1000',
      'routes[0].retry.max_age: must be a duration like 500ms, 30s, 5m, 24h, 7d or a number of seconds',
      'clients[0].methods[0]: setWebhook is reserved by the gateway: no client may call it',
    ]);
  });

  it('never repeats a secret value in a problem', () => {
    const env = {
      ...ENV,
      SOL_TOKEN: `${secret()}${secret()}`,
      HOOK_SECRET: `${secret()} ${secret()}`,
      SITE_SECRET: 'tiny-secret',
      SITE_TOKEN: 'short/secret',
    };
    const config = doc({
      routes: [{ ...route, service_token_env: 'ADMIN_TOKEN_X' }],
      clients: [client, { ...client, name: 'admin', token_env: 'ADMIN_TOKEN_X' }],
    });
    const problems = problemsOf(stringify(config), {
      ...env,
      ADMIN_TOKEN_X: env.SITE_TOKEN,
    });
    expect(problems).toHaveLength(5);
    const text = problems.join('\n');
    for (const value of new Set(Object.values(env))) {
      expect(text).not.toContain(value);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
