import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { exited, killHard, stopProcess, trackChild } from '@relaygram/testing';

export type AppName = 'ingress' | 'dispatcher' | 'gateway';

export interface AppSlotOptions {
  app: AppName;
  /** `ingress-a`, `dispatcher-b`...: names the slot in logs and the report. */
  name: string;
  root: string;
  port: number;
  adminPort: number;
  /** The environment of every start: config path, Redis URL, secrets... */
  env: NodeJS.ProcessEnv;
  /** Every start of this slot appends its stdout and stderr here. */
  logPath: string;
}

/**
 * One app "slot": `node apps/<app>/dist/main.js` on fixed ports, started, killed with
 * SIGKILL and started again as often as a scenario wants. The ports stay the same across
 * restarts, so the load balancer in front of the ingress slots needs no reconfiguring.
 */
export class AppSlot {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;
  private starting: Promise<void> | undefined;

  constructor(readonly options: AppSlotOptions) {}

  get name(): string {
    return this.options.name;
  }

  get url(): string {
    return `http://127.0.0.1:${this.options.port}`;
  }

  get adminUrl(): string {
    return `http://127.0.0.1:${this.options.adminPort}`;
  }

  get running(): boolean {
    return this.child !== undefined && !exited(this.child);
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** Starts the process and resolves once it answers /health/live. */
  start(timeoutMs = 90_000): Promise<void> {
    this.starting ??= this.launch(timeoutMs).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Starts the process without waiting for it to be live. */
  spawnOnly(): void {
    if (this.running) return;
    const { app, root, port, adminPort, env, logPath } = this.options;
    const entry = join(root, 'apps', app, 'dist', 'main.js');
    if (!existsSync(entry)) {
      throw new Error(`${entry} is missing: run \`npm run build\` first`);
    }
    const log = openSync(logPath, 'a');
    writeSync(log, `\n--- chaos: start #${this.starts + 1} of ${this.name} at ${stamp()}\n`);
    const child = spawn(process.execPath, [entry], {
      cwd: root,
      env: {
        ...env,
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        HOST: '127.0.0.1',
        ADMIN_HOST: '127.0.0.1',
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    trackChild(child, this.name);
    this.child = child;
    this.starts++;
  }

  private async launch(timeoutMs: number): Promise<void> {
    this.spawnOnly();
    const child = this.child as ChildProcess;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (exited(child)) throw new Error(`${this.name} exited during start-up:\n${this.logTail()}`);
      if (await answers(`${this.url}/health/live`)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name} did not answer /health/live in ${timeoutMs} ms:\n${this.logTail()}`,
        );
      }
      await sleep(100);
    }
  }

  /** kill -9: no shutdown hook runs, sockets are reset, locks stay until they expire. */
  async kill9(): Promise<void> {
    if (!this.child || !this.running) return;
    this.note(`kill -9 (pid ${this.child.pid})`);
    this.kills++;
    await killHard(this.child);
  }

  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child, 15_000);
  }

  /** A line of our own in the slot's log, so a reader sees where the chaos happened. */
  note(text: string): void {
    try {
      const log = openSync(this.options.logPath, 'a');
      writeSync(log, `--- chaos: ${text} at ${stamp()}\n`);
      closeSync(log);
    } catch {
      // the log is for humans; losing a note changes nothing
    }
  }

  logTail(lines = 20): string {
    try {
      const text = readFileSync(this.options.logPath, 'utf8').trimEnd().split('\n');
      return text.slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await request(url, { headersTimeout: 1_000, bodyTimeout: 1_000 });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

export function stamp(): string {
  return new Date().toISOString();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
