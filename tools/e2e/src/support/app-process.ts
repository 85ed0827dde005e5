import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stablePort, stopProcess } from '@relaygram/testing';

export const REPO = join(__dirname, '..', '..', '..', '..');

export type AppName = 'ingress' | 'dispatcher' | 'gateway' | 'standalone';

/** Where a built app's entry point is; these tests run the build, as production does. */
export function appMain(app: AppName | 'cli'): string {
  const main = join(REPO, 'apps', app, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  return main;
}

/** One Relaygram process (`node apps/<app>/dist/main.js`), on ports of its own. */
export class AppProcess {
  private readonly chunks: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    readonly url: string,
    readonly adminUrl: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => this.chunks.push(chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => this.chunks.push(chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(
    app: AppName,
    env: Record<string, string>,
    options: { name?: string; port?: number } = {},
  ): Promise<AppProcess> {
    const name = options.name ?? app;
    // Below the ephemeral range: a port from listen(0) can be taken by one of the many
    // outgoing connections before the app, still booting, listens on it.
    const port = options.port ?? (await stablePort());
    const adminPort = await stablePort();
    const child = spawn(process.execPath, [appMain(app)], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AppProcess(name, `http://127.0.0.1:${port}`, `http://127.0.0.1:${adminPort}`, child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.chunks.join('');
  }

  /** Waits for /health/ready to answer 200. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} exited during start-up:\n${this.output()}`);
      try {
        const res = await fetch(`${this.url}/health/ready`);
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.output()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** SIGTERM and wait; SIGKILL after `graceMs`. Resolves to the exit code. */
  async stop(graceMs = 30_000): Promise<number | null> {
    await stopProcess(this.child, graceMs);
    return this.child.exitCode;
  }

  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }
}

/** Stops every process given, in parallel, whatever state each is in. */
export async function stopAll(processes: Iterable<AppProcess>): Promise<void> {
  await Promise.all([...processes].map((p) => p.stop().catch(() => p.kill())));
}

/** Polls `check` every `intervalMs` until it holds, or throws after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
