import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@relaygram/queue';
import { instructionsOf, parseDockerfile } from './dockerfile-parser';

const run = promisify(execFile);
const REPO = join(__dirname, '..', '..', '..', '..');

/** Every path under `dir`, relative to it, skipping node_modules. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.name === 'node_modules') return [];
    return entry.isDirectory() ? [path, ...filesUnder(dir, path)] : [path];
  });
}

/**
 * No Docker engine here: the image's steps run for real on this workspace instead. The
 * build stage's layout step copies the build (`npm run build`, or `npm install`'s
 * prepare) into a directory standing for /app, the runtime stage's `npm ci --omit=dev`
 * installs there, and the image's CMD starts the gateway, which must answer the image's
 * HEALTHCHECK.
 */
describe('Docker image, simulated without Docker', () => {
  const dockerfile = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const [build, runtime] = dockerfile.stages;
  let root: string;
  let app: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'relaygram-image-'));
    app = join(root, 'out');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('lays out the runtime files, installs production dependencies, and starts an app', async () => {
    if (!existsSync(join(REPO, 'apps', 'gateway', 'dist', 'main.js'))) {
      throw new Error('the workspace is not built: run `npm run build` (or `npm install`) first');
    }
    const layout = instructionsOf(build, 'RUN').find((step) => step.startsWith('mkdir -p /out'));
    expect(layout).toBeDefined();
    await run('sh', ['-ec', layout!.replaceAll('/out', app)], { cwd: REPO });

    const files = filesUnder(app);
    expect(files).toContain('apps/gateway/dist/main.js');
    expect(files).toContain('libs/admin/public/index.html');
    expect(files).toContain('config/relaygram.yaml');
    expect(files).toContain('apps/cli/bin/relaygram.js');
    // Builds only: no sources, specs or tools' code in the image.
    expect(files.filter((f) => f.endsWith('.ts') || /(^|\/)src(\/|$)|spec\.js$/.test(f))).toEqual(
      [],
    );
    expect(
      files.filter(
        (f) => f.startsWith('tools/') && !f.endsWith('package.json') && f.split('/').length > 2,
      ),
    ).toEqual([]);

    const [install] = instructionsOf(runtime, 'RUN');
    const npmCi = install.split('&&')[0].trim().split(/\s+/);
    expect(npmCi.slice(0, 4)).toEqual(['npm', 'ci', '--omit=dev', '--ignore-scripts']);
    // The machine's npm cache serves what it can; `npm cache clean` is left to the image.
    await run(npmCi[0], [...npmCi.slice(1), '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: app,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(existsSync(join(app, 'node_modules', 'jest'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', '@nestjs', 'core'))).toBe(true);

    const env = Object.fromEntries(
      instructionsOf(runtime, 'ENV')
        .join(' ')
        .split(/\s+/)
        .map((pair) => pair.split('=') as [string, string]),
    );
    expect(env.RELAYGRAM_CONFIG).toBe('/app/config/relaygram.yaml');
    const port = await freePort();
    const childEnv = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: env.NODE_ENV,
      APP: 'gateway',
      RELAYGRAM_CONFIG: env.RELAYGRAM_CONFIG.replace('/app', app),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      PORT: String(port),
      ADMIN_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    const [cmd] = instructionsOf(runtime, 'CMD');
    const argv = JSON.parse(cmd) as string[];
    const child = spawn(argv[0], argv.slice(1), {
      cwd: app,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${port}/health/live`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`the gateway did not come up:\n${output.join('')}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      // The image's own HEALTHCHECK command, exec form.
      const [check] = instructionsOf(runtime, 'HEALTHCHECK');
      const checkArgv = JSON.parse(check.slice(check.indexOf('CMD') + 3).trim()) as string[];
      await expect(run(checkArgv[0], checkArgv.slice(1), { env: childEnv })).resolves.toBeDefined();
      await expect(
        run(checkArgv[0], checkArgv.slice(1), {
          env: { ...childEnv, PORT: String(await freePort()) },
        }),
      ).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
