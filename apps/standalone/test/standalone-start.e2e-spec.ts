import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { findRedisServer, freePort, processAlive } from '@relaygram/queue';

const REPO = join(__dirname, '..', '..', '..');
const MAIN = join(REPO, 'apps', 'standalone', 'src', 'main.ts');

interface Standalone {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start` as a user runs it, from source, in a directory of its own (./data/redis). */
function spawnStandalone(cwd: string, env: Record<string, string>): Standalone {
  const child = spawn(process.execPath, ['-r', require.resolve('@swc-node/register'), MAIN], {
    cwd,
    env: { SWC_NODE_PROJECT: join(REPO, 'tsconfig.base.json'), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { process: child, output: () => chunks.join(''), exited };
}

async function waitForOutput(child: Standalone, pattern: RegExp, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(child.output());
    if (match) return match;
    if (child.process.exitCode !== null || Date.now() > deadline) {
      throw new Error(`no ${pattern} in the output:\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('standalone: start-up as `npm start` runs it', () => {
  let dir: string;
  let config: string;
  let child: Standalone | undefined;
  let redisPid: number | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relaygram-standalone-'));
    config = join(dir, 'relaygram.yaml');
    // Nothing listens on this port: the install's Redis is "not running".
    writeFileSync(
      config,
      `redis:\n  url: redis://127.0.0.1:${await freePort()}\n  prefix: t-${randomUUID().slice(0, 8)}\n`,
    );
  });

  afterEach(async () => {
    if (child && child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
    child = undefined;
    if (redisPid !== undefined && processAlive(redisPid)) process.kill(redisPid, 'SIGKILL');
    redisPid = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('without redis-server on PATH: exits 1 saying how to get one', async () => {
    child = spawnStandalone(dir, {
      PATH: mkdtempSync(join(dir, 'bin-')),
      RELAYGRAM_CONFIG: config,
      PORT: '0',
      ADMIN_PORT: '0',
    });
    expect(await child.exited).toBe(1);
    const output = child.output();
    expect(output).toContain('relaygram standalone: cannot start');
    expect(output).toContain('apt-get install redis-server');
    expect(output).toContain('brew install redis');
    expect(output).toContain('docker compose up redis');
  }, 90_000);

  it('with redis-server on PATH: starts it, serves /healthz, and stops it on SIGTERM', async () => {
    const redisServer = findRedisServer();
    if (!redisServer) throw new Error('this test needs redis-server on PATH');
    const onlyRedis = mkdtempSync(join(dir, 'bin-'));
    symlinkSync(realpathSync(redisServer), join(onlyRedis, 'redis-server'));
    child = spawnStandalone(dir, {
      PATH: onlyRedis,
      RELAYGRAM_CONFIG: config,
      PORT: '0',
      ADMIN_PORT: '0',
    });

    const [, pid] = await waitForOutput(child, /started redis-server \(pid (\d+)\)/);
    redisPid = Number(pid);
    const [, url] = await waitForOutput(
      child,
      /standalone listening on (http:\/\/[\d.:]+) \(public\)/,
    );
    const output = child.output();
    expect(output).toContain(`data in ${join(realpathSync(dir), 'data', 'redis')}`);
    // What listens where, and what to do next with no bots.
    expect(output).toMatch(
      /public http:\/\/127\.0\.0\.1:\d+: webhooks \/webhooks\/telegram\/<bot>/,
    );
    expect(output).toMatch(
      /management http:\/\/127\.0\.0\.1:\d+: \/metrics, \/admin answers 404 until ADMIN_TOKEN is set/,
    );
    expect(output).toContain('npm run demo');

    const res = await request(`${url}/healthz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ status: 'ok', service: 'standalone', bots: [] });
    expect(processAlive(redisPid)).toBe(true);

    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    // The server is stopped by the app once it has closed, before the process exits.
    expect(processAlive(redisPid)).toBe(false);
  }, 90_000);

  it('names the missing bot token variable and starts nothing', async () => {
    writeFileSync(
      config,
      [
        'bots:',
        '  - id: my-bot',
        '    token_env: MY_BOT_TOKEN_THAT_IS_NOT_SET',
        '    mode: polling',
        '',
      ].join('\n'),
    );
    child = spawnStandalone(dir, {
      PATH: process.env.PATH ?? '',
      RELAYGRAM_CONFIG: config,
      PORT: '0',
      ADMIN_PORT: '0',
    });
    expect(await child.exited).toBe(1);
    expect(child.output()).toContain('relaygram standalone: cannot start');
    expect(child.output()).toMatch(/bots\[0\]\.token_env: .*MY_BOT_TOKEN_THAT_IS_NOT_SET/);
    expect(child.output()).not.toContain('started redis-server');
  }, 90_000);
});
