import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRelaygramCliSync } from '@relaygram/testing';

const REPO = join(__dirname, '..', '..', '..');
const SHIPPED = join(REPO, 'config', 'relaygram.yaml');
const EXAMPLE = join(REPO, 'config', 'relaygram.example.yaml');

const dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const token = (): string =>
  `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`;
const secret = (): string => randomBytes(24).toString('base64url');

const EXAMPLE_ENV: Record<string, string> = {
  SOL_PROD_BOT_TOKEN: token(),
  SHOP_BOT_TOKEN: token(),
  SHOP_BOT_WEBHOOK_SECRET: secret(),
  SHOP_SIGNING_SECRET: secret(),
  SHOP_BUTTONS_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  SITE_SERVICE_TOKEN: secret(),
  SITE_TELEGRAM_SECRET_TOKEN: secret(),
  SUPPORT_BOT_CLIENT_TOKEN: secret(),
};

/** Only the given environment: no REDIS_URL or secrets leak in from the test runner. */
const relaygram = runRelaygramCliSync;

const NO_BOTS_WARNING =
  'warning: bots: none configured: Relaygram runs but receives nothing. Add a bot as in config/relaygram.example.yaml, or try `npm run demo`';

describe('relaygram config check', () => {
  it('passes the shipped config/relaygram.yaml, with its warning', () => {
    expect(relaygram(['config', 'check', 'config/relaygram.yaml'])).toEqual({
      status: 0,
      stdout: `ok: ${SHIPPED} — 0 bots, 0 routes, 0 clients\n${NO_BOTS_WARNING}\n`,
      stderr: '',
    });
  });

  it('passes the example with its env vars set', () => {
    expect(relaygram(['config', 'check', EXAMPLE], EXAMPLE_ENV)).toEqual({
      status: 0,
      stdout: `ok: ${EXAMPLE} — 2 bots, 4 routes (1 pull), 2 clients\n`,
      stderr: '',
    });
  });

  it('passes the example with --no-env and no variables', () => {
    expect(relaygram(['config', 'check', EXAMPLE, '--no-env'])).toEqual({
      status: 0,
      stdout: `ok: ${EXAMPLE} — 2 bots, 4 routes (1 pull), 2 clients (environment variables not checked)\n`,
      stderr: '',
    });
  });

  it('fails the example without its env vars, naming each one', () => {
    const run = relaygram(['config', 'check', EXAMPLE]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const [summary, ...problems] = run.stderr.trimEnd().split('\n');
    expect(summary).toBe(`invalid: ${EXAMPLE} — 9 problems`);
    expect(problems[0]).toBe(
      'bots[0].token_env: environment variable SOL_PROD_BOT_TOKEN is not set',
    );
    for (const name of Object.keys(EXAMPLE_ENV)) {
      expect(
        problems.some((line) => line.includes(`environment variable ${name} is not set`)),
      ).toBe(true);
    }
  });

  it('fails a bad file with one line per problem, never showing a secret', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'bots:',
        '  - id: sol-prod',
        '    token_env: SOL_TOKEN',
        '    mode: polling',
        'routes:',
        '  - name: site',
        '    bots: [shop]',
        '    target_url: https://user:pw@site.example/',
        '    timeout: 1h',
        '',
      ].join('\n'),
    );
    const badToken = `not-a-token-${secret()}`;
    expect(relaygram(['config', 'check', file], { SOL_TOKEN: badToken })).toEqual({
      status: 1,
      stdout: '',
      stderr: [
        `invalid: ${file} — 4 problems`,
        'bots[0].token_env: environment variable SOL_TOKEN does not hold a bot token (digits, a colon, then at least 30 letters, digits, _ or -)',
        'routes[0].bots[0]: unknown bot "shop"',
        'routes[0].target_url: must not contain a user name or password; use service_token_env',
        'routes[0].timeout: must be from 1s to 5m',
        '',
      ].join('\n'),
    });
  });

  it('reports a YAML syntax error by file, line and column', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'bots:\n  - id: a\n    id: b\n');
    expect(relaygram(['config', 'check', file])).toEqual({
      status: 1,
      stdout: '',
      stderr: `invalid: ${file} — 1 problem\n${file}:3:5: Map keys must be unique\n`,
    });
  });

  it('checks $RELAYGRAM_CONFIG, resolved against the current directory, when no file is given', () => {
    const cwd = join(dir, 'install');
    mkdirSync(join(cwd, 'etc'), { recursive: true });
    writeFileSync(join(cwd, 'etc', 'relay.yaml'), 'routes: []\n');
    expect(relaygram(['config', 'check'], { RELAYGRAM_CONFIG: 'etc/relay.yaml' }, cwd)).toEqual({
      status: 0,
      stdout: `ok: ${join(cwd, 'etc', 'relay.yaml')} — 0 bots, 0 routes, 0 clients\n${NO_BOTS_WARNING}\n`,
      stderr: '',
    });
  });

  it('checks config/relaygram.yaml of the current directory by default', () => {
    const run = relaygram(['config', 'check']);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`ok: ${SHIPPED} — 0 bots, 0 routes, 0 clients`);
  });

  it('says when the file does not exist', () => {
    const file = join(dir, 'missing.yaml');
    expect(relaygram(['config', 'check', file])).toEqual({
      status: 1,
      stdout: '',
      stderr: `invalid: ${file} — 1 problem\n${file}: no such file\n`,
    });
  });

  it('checks a REDIS_URL override, and skips it with --no-env', () => {
    const bad = relaygram(['config', 'check', SHIPPED], { REDIS_URL: 'localhost:6379' });
    expect(bad).toEqual({
      status: 1,
      stdout: '',
      stderr: `invalid: ${SHIPPED} — 1 problem\nREDIS_URL: must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL (it overrides redis.url)\n`,
    });
    const skipped = relaygram(['config', 'check', SHIPPED, '--no-env'], {
      REDIS_URL: 'localhost:6379',
    });
    expect(skipped.status).toBe(0);
  });
});

describe('relaygram', () => {
  it('lists the config commands in its help', () => {
    const run = relaygram(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: relaygram \[options\] \[command\]/);
    expect(run.stdout).toMatch(/Configuration:\n\s+config\s+inspect the configuration file/);
  });

  it('suggests the right command for a typo and exits 1', () => {
    const run = relaygram(['config', 'chek']);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("error: unknown command 'chek'");
    expect(run.stderr).toContain('(Did you mean check?)');
  });
});
