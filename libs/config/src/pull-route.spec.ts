import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from './loader';

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-pull-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function load(config: Record<string, unknown>) {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(file, stringify(config));
  return loadConfig({ path: file, env: ENV });
}

const botToken = (): string =>
  `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`;
const secret = (): string => randomBytes(24).toString('base64url');

const ENV: NodeJS.ProcessEnv = {
  SOL_TOKEN: botToken(),
  SHOP_TOKEN: botToken(),
  SUPPORT_TOKEN: secret(),
  SHOP_CLIENT_TOKEN: secret(),
  SITE_SECRET: secret(),
};

const bots = [
  { id: 'sol-prod', token_env: 'SOL_TOKEN', mode: 'polling' },
  { id: 'shop-bot', token_env: 'SHOP_TOKEN', mode: 'polling' },
];
const clients = [
  { name: 'support', token_env: 'SUPPORT_TOKEN', bots: ['sol-prod'] },
  { name: 'shop', token_env: 'SHOP_CLIENT_TOKEN', bots: ['sol-prod', 'shop-bot'] },
];
const pullRoute = {
  name: 'support-bot',
  bots: ['sol-prod'],
  pull: { client: 'support' },
  match: { commands: ['/help'] },
};

function problemsOf(routes: unknown[], extra: Record<string, unknown> = {}): string[] {
  const result = load({ bots, clients, routes, ...extra });
  if (result.ok) throw new Error('expected the config to be refused');
  return result.problems;
}

describe('loadConfig: pull routes', () => {
  it('keeps pull routes apart from the push routes the dispatcher delivers', () => {
    const result = load({
      bots,
      clients,
      routes: [
        { ...pullRoute, retry: { max_age: '2h' }, ordering: 'strict' },
        { name: 'site', target_url: 'https://site.example/u', signing_secret_env: 'SITE_SECRET' },
        { name: 'shop-all', bots: ['shop-bot'], pull: { client: 'shop' } },
      ],
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.routes.map((r) => r.name)).toEqual(['site']);
    expect(result.config.pullRoutes).toEqual([
      {
        name: 'support-bot',
        bots: ['sol-prod'],
        match: { commands: ['/help'] },
        pull: { client: 'support' },
        maxAgeMs: 2 * 3600_000,
      },
      { name: 'shop-all', bots: ['shop-bot'], pull: { client: 'shop' }, maxAgeMs: 24 * 3600_000 },
    ]);
    // A pull route needs no secret of its own: its client's token is the credential.
    expect(result.config.warnings.filter((w) => w.startsWith('routes[0]'))).toEqual([]);
  });

  it('refuses a route with both target_url and pull, and one with neither, in one line each', () => {
    expect(problemsOf([{ ...pullRoute, target_url: 'https://site.example/u' }])).toEqual([
      'routes[0]: has both target_url and pull; a route is either pushed to its target_url or pulled by its client, not both',
    ]);
    expect(problemsOf([{ name: 'lost' }])).toEqual([
      'routes[0].target_url: required, or pull: { client: <client name> } for a pull route',
    ]);
  });

  it('refuses signing, header, webhook_reply and delivery keys on a pull route', () => {
    expect(
      problemsOf([
        {
          ...pullRoute,
          signing_secret_env: 'SITE_SECRET',
          signature: 'standard-webhooks',
          service_token_env: 'SITE_SECRET',
          telegram_secret_token_env: 'SITE_SECRET',
          webhook_reply: false,
          format: 'envelope',
          concurrency: 4,
          timeout: '5s',
          ordering: 'chat',
          retry: { max_age: '1h', backoff_cap: '1m', max_consecutive_5xx: 3 },
        },
      ]),
    ).toEqual([
      'routes[0].signing_secret_env: not for a pull route: nothing is sent to it, its client calls getUpdates with its own token',
      'routes[0].signature: not for a pull route: nothing is sent to it, its client calls getUpdates with its own token',
      'routes[0].service_token_env: not for a pull route: nothing is sent to it, its client calls getUpdates with its own token',
      'routes[0].telegram_secret_token_env: not for a pull route: nothing is sent to it, its client calls getUpdates with its own token',
      'routes[0].webhook_reply: not for a pull route: its client calls the Bot API through the drop-in',
      'routes[0].format: not for a pull route: getUpdates returns the updates as Telegram sent them',
      'routes[0].concurrency: not for a pull route: its client reads one batch at a time per bot',
      'routes[0].timeout: not for a pull route: nothing is sent to it, its client calls getUpdates with its own token',
      'routes[0].ordering: a pull route keeps one lane per bot in acceptance order (strict): its client reads one stream, as from Telegram',
      'routes[0].retry.backoff_cap: not for a pull route: nothing is retried; an update waits until its client confirms it or max_age passes',
      'routes[0].retry.max_consecutive_5xx: not for a pull route: nothing is retried; an update waits until its client confirms it or max_age passes',
    ]);
  });

  it('needs a known client, allowed every bot of the route, reading one route per bot', () => {
    expect(problemsOf([{ ...pullRoute, pull: { client: 'nobody' } }])).toEqual([
      'routes[0].pull.client: unknown client "nobody"',
    ]);
    expect(problemsOf([{ ...pullRoute, pull: {} }])).toEqual(['routes[0].pull.client: required']);
    expect(problemsOf([{ ...pullRoute, pull: 'support' }])).toEqual([
      'routes[0].pull: must be a mapping',
    ]);
    // No `bots:` means every bot, and support may use sol-prod only.
    expect(problemsOf([{ name: 'everything', pull: { client: 'support' } }])).toEqual([
      'routes[0].pull.client: client "support" may not use bot "shop-bot"; add it to clients[0].bots or list the route\'s bots',
    ]);
    expect(
      problemsOf([
        { name: 'shop-a', bots: ['shop-bot'], pull: { client: 'shop' } },
        { name: 'shop-b', pull: { client: 'shop' } },
      ]),
    ).toEqual([
      'routes[1].pull.client: client "shop" already pulls bot "shop-bot" through routes[0]; a client\'s getUpdates on a bot reads one route',
    ]);
  });

  it('names of pull and push routes share one namespace', () => {
    expect(
      problemsOf([pullRoute, { name: 'support-bot', target_url: 'https://site.example/u' }]),
    ).toEqual(['routes[1].name: "support-bot" is already the name of routes[0]']);
  });
});
