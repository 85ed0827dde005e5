import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { RelaygramConfig } from './config.types';
import { loadConfigOrThrow, reloadConfig } from './loader';

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-reload-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV: NodeJS.ProcessEnv = {
  SOL_TOKEN: `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`,
  SITE_SECRET: randomBytes(24).toString('base64url'),
};

function config(routeNames: string[], redis?: object): object {
  return {
    ...(redis ? { redis } : {}),
    bots: [{ id: 'sol-prod', token_env: 'SOL_TOKEN', mode: 'polling' }],
    routes: routeNames.map((name) => ({
      name,
      target_url: `https://${name}.example/updates`,
      signing_secret_env: 'SITE_SECRET',
    })),
  };
}

let files = 0;
/** A config file of its own for each test, loaded once as the current config. */
function start(initial: object): { path: string; current: RelaygramConfig } {
  const path = join(dir, `config-${++files}.yaml`);
  writeFileSync(path, stringify(initial));
  return { path, current: loadConfigOrThrow({ path, env: ENV }) };
}

describe('reloadConfig', () => {
  it('returns the new config when the file is valid', () => {
    const { path, current } = start(config(['site']));
    writeFileSync(path, stringify(config(['site', 'shop'])));
    const result = reloadConfig(current, { path, env: ENV });
    expect(result.ok && result.config.routes.map((r) => r.name)).toEqual(['site', 'shop']);
  });

  it('returns the problems of an invalid file', () => {
    const { path, current } = start(config(['site']));
    writeFileSync(path, stringify(config(['Site'])));
    expect(reloadConfig(current, { path, env: ENV })).toEqual({
      ok: false,
      problems: ['routes[0].name: must be 1-64 characters of a-z, 0-9 and -'],
    });
  });

  it.each([
    ['url', { url: 'redis://10.0.0.9:6379' }],
    ['prefix', { prefix: 'relaygram-2' }],
  ])('refuses a change of the redis %s', (_key, redis) => {
    const { path, current } = start(config(['site']));
    writeFileSync(path, stringify(config(['site', 'shop'], redis)));
    expect(reloadConfig(current, { path, env: ENV })).toEqual({
      ok: false,
      problems: ['redis: a change of the Redis connection or prefix needs a restart'],
    });
  });

  it('accepts redis settings written out that equal the defaults', () => {
    const { path, current } = start(config(['site']));
    const same = { url: 'redis://127.0.0.1:6379', prefix: 'relaygram' };
    writeFileSync(path, stringify(config(['site', 'shop'], same)));
    expect(reloadConfig(current, { path, env: ENV })).toMatchObject({ ok: true });
  });
});

/*
 * @nestjs/common 12 ships only as ES modules, which Jest's CommonJS loader cannot
 * require on Node 20, while Node itself can. So ConfigService runs in a child process
 * on the TypeScript sources, and the test reads back what it saw.
 */
describe('ConfigService.reload', () => {
  const repoRoot = join(__dirname, '..', '..', '..');
  const probe = join(dir, 'reload-probe.cjs');
  writeFileSync(
    probe,
    `
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const src = join(process.env.REPO_ROOT, 'libs/config/src');
const { ConfigService } = require(join(src, 'config.service.ts'));
const { loadConfigOrThrow } = require(join(src, 'loader.ts'));
const { readRuntimeEnv } = require(join(src, 'runtime-env.ts'));

async function main() {
  const [path, ...versions] = JSON.parse(process.env.PROBE_INPUT);
  writeFileSync(path, versions[0]);
  const initial = loadConfigOrThrow({ path });
  const service = new ConfigService(initial, readRuntimeEnv('ingress', {}), 'ingress');
  const notified = [];
  service.onReload((next, previous) =>
    notified.push([next.routes.map((r) => r.name), previous.routes.map((r) => r.name)]),
  );
  const steps = [];
  for (const text of versions.slice(1)) {
    const before = service.config;
    writeFileSync(path, text);
    const outcome = await service.reload();
    steps.push({
      ok: outcome.ok,
      problems: outcome.ok ? [] : outcome.problems,
      swapped: service.config !== before,
      routes: service.config.routes.map((r) => r.name),
      shopTarget: service.route('shop')?.targetUrl ?? null,
    });
  }
  process.stdout.write(JSON.stringify({ steps, notified }));
}
main().catch((error) => {
  process.stderr.write(String(error && error.stack));
  process.exit(1);
});
`,
  );

  function file(routeNames: string[], extra = ''): string {
    return `${stringify(config(routeNames))}${extra}`;
  }

  it('swaps in a valid file, tells its listeners, and keeps the old config on an invalid one', () => {
    const path = join(dir, `service-${++files}.yaml`);
    const child = spawnSync(process.execPath, ['-r', '@swc-node/register', probe], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        SWC_NODE_PROJECT: join(repoRoot, 'tsconfig.base.json'),
        REPO_ROOT: repoRoot,
        PROBE_INPUT: JSON.stringify([
          path,
          file(['site']),
          file(['site', 'shop']),
          file(['site'], 'routes_extra: true\n'),
        ]),
        ...ENV,
      },
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      steps: [
        {
          ok: true,
          problems: [],
          swapped: true,
          routes: ['site', 'shop'],
          shopTarget: 'https://shop.example/updates',
        },
        {
          ok: false,
          problems: ['routes_extra: unknown key'],
          swapped: false,
          routes: ['site', 'shop'],
          shopTarget: 'https://shop.example/updates',
        },
      ],
      notified: [[['site', 'shop'], ['site']]],
    });
  });
});
