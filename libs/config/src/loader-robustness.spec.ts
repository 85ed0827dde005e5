import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { stringify } from 'yaml';
import { loadConfig } from './loader';
import { BotDto, WebhookDto } from './schema/bot.dto';
import { ClientDto } from './schema/client.dto';
import { RedisDto } from './schema/redis.dto';
import { RelaygramConfigDto } from './schema/relaygram-config.dto';
import { RetryDto, RouteDto, RouteMatchDto } from './schema/route.dto';
import { TelegramDto } from './schema/telegram.dto';
import type { PathSegment } from './yaml-path';

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-robustness-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV: NodeJS.ProcessEnv = {
  SOL_TOKEN: `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`,
  SHOP_TOKEN: `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`,
  HOOK_SECRET: randomBytes(24).toString('base64url'),
  SITE_SECRET: randomBytes(24).toString('base64url'),
  SITE_TOKEN: randomBytes(24).toString('base64url'),
};

const base = {
  redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram' },
  telegram: { api_base: 'https://api.telegram.org' },
  bots: [
    { id: 'sol-prod', token_env: 'SOL_TOKEN', mode: 'polling', default: true },
    {
      id: 'shop',
      token_env: 'SHOP_TOKEN',
      mode: 'webhook',
      webhook: { url: 'https://relay.example/hook', secret_token_env: 'HOOK_SECRET' },
    },
  ],
  routes: [
    {
      name: 'site',
      target_url: 'https://site.example/updates',
      signing_secret_env: 'SITE_SECRET',
      match: { update_types: ['message'], commands: ['/start'] },
      retry: { max_age: '1h' },
    },
  ],
  clients: [
    { name: 'site', token_env: 'SITE_TOKEN', bots: ['sol-prod'], methods: ['sendMessage'] },
  ],
};

const ODD_VALUES: unknown[] = [
  'x',
  '',
  0,
  -1,
  1.5,
  1e21,
  true,
  null,
  [],
  ['x'],
  [1],
  [{}],
  [[]],
  {},
  { a: 1 },
  { 'x y': [null] },
];

const SECTIONS: Array<[PathSegment[], new () => object]> = [
  [[], RelaygramConfigDto],
  [['redis'], RedisDto],
  [['telegram'], TelegramDto],
  [['bots', 0], BotDto],
  [['bots', 1, 'webhook'], WebhookDto],
  [['routes', 0], RouteDto],
  [['routes', 0, 'match'], RouteMatchDto],
  [['routes', 0, 'retry'], RetryDto],
  [['clients', 0], ClientDto],
];

// A problem line: a YAML path (or an env var name), a colon, then one line of text.
// A key that is not a plain name is quoted: `routes[0].match["x y"]`.
const PROBLEM_LINE =
  /^[a-z_][a-z0-9_]*(\[\d+\]|\["[^"\n]*"\])*(\.[a-z0-9_]+(\[\d+\]|\["[^"\n]*"\])*)*: [^\n]+$/;

let files = 0;

describe('loadConfig on values of every wrong kind', () => {
  const keyPaths = SECTIONS.flatMap(([section, dto]) =>
    schemaKeys(dto).map((key) => [...section, key]),
  );

  it('starts from a valid document', () => {
    expect(load(base)).toMatchObject({ ok: true });
    expect(keyPaths.length).toBeGreaterThan(40);
  });

  it.each(keyPaths.map((path) => [path.join('.'), path]))(
    'never throws and reports one-line problems for %s',
    (_name, path) => {
      for (const value of ODD_VALUES) {
        const result = load(withValue(base, path as PathSegment[], value));
        if (result.ok) continue;
        expect(result.problems.length).toBeGreaterThan(0);
        for (const line of result.problems) expect(line).toMatch(PROBLEM_LINE);
      }
    },
  );
});

function load(doc: object): ReturnType<typeof loadConfig> {
  const path = join(dir, `config-${++files}.yaml`);
  writeFileSync(path, stringify(doc));
  return loadConfig({ path, env: ENV });
}

function withValue(doc: object, path: PathSegment[], value: unknown): object {
  const copy = structuredClone(doc) as Record<PathSegment, unknown>;
  let node: Record<PathSegment, unknown> = copy;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<PathSegment, unknown>;
  node[path[path.length - 1]] = value;
  return copy;
}

function schemaKeys(dto: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}
