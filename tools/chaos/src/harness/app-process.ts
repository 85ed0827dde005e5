import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { exitOf, exited, killHard, stopProcess, trackChild } from '@relaygram/testing';

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

/** How a process of a slot ended. */
export interface SlotExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/** What a graceful stop (SIGTERM) came to. */
export interface Termination extends SlotExit {
  /** From the SIGTERM to the exit. */
  ms: number;
  /** The process outlived the grace given and was killed with SIGKILL. */
  forced: boolean;
}

/**
 * One app "slot": `node apps/<app>/dist/main.js` on fixed ports, started, killed with
 * SIGKILL, paused, signalled and started again as often as a scenario wants. The ports
 * stay the same across restarts, so the load balancer in front of the ingress slots
 * needs no reconfiguring.
 */
export class AppSlot {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;
  /** RELAYGRAM_FAULTS of the next start (undefined: none, as in production). */
  faults: string | undefined;
  /** RELAYGRAM_FAULTS of the process running now. */
  runningFaults: string | undefined;
  /** Stopped with SIGSTOP, not continued yet. */
  paused = false;
  /** Exits nobody here asked for: the process killed itself (RELAYGRAM_FAULTS) or crashed. */
  readonly selfExits: SlotExit[] = [];
  /** Processes this slot signalled to end, so their exit is not taken for a death of their own. */
  private readonly endAsked = new WeakSet<ChildProcess>();
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

  /** A start is in progress (spawned, not live yet). */
  get startPending(): boolean {
    return this.starting !== undefined;
  }

  /** Starts the process and resolves once it answers /health/live. */
  start(timeoutMs = 90_000): Promise<void> {
    const previous = this.starting;
    if (previous && this.child && exited(this.child)) {
      // Killed while starting: that start is failing; this one starts another process.
      return previous.catch(() => undefined).then(() => this.start(timeoutMs));
    }
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
    const faults = this.faults;
    const log = openSync(logPath, 'a');
    writeSync(
      log,
      `\n--- chaos: start #${this.starts + 1} of ${this.name}${faults ? ` with RELAYGRAM_FAULTS=${faults}` : ''} at ${stamp()}\n`,
    );
    const child = spawn(process.execPath, [entry], {
      cwd: root,
      env: {
        ...env,
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        HOST: '127.0.0.1',
        ADMIN_HOST: '127.0.0.1',
        ...(faults ? { RELAYGRAM_FAULTS: faults } : {}),
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    trackChild(child, this.name);
    child.once('exit', (code, signal) => {
      if (!this.endAsked.has(child)) this.selfExits.push({ code, signal, at: Date.now() });
    });
    this.child = child;
    this.runningFaults = faults;
    this.paused = false;
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
    this.endAsked.add(this.child);
    await killHard(this.child);
  }

  /**
   * SIGSTOP (the process freezes as a VM pause or a starved container would: no timer,
   * no socket read, no lock renewal), SIGCONT, or SIGHUP (config reload).
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT' | 'SIGHUP'): void {
    if (!this.child || !this.running) throw new Error(`${this.name} is not running`);
    this.note(`${signal} (pid ${this.child.pid})`);
    this.child.kill(signal);
    if (signal === 'SIGSTOP') this.paused = true;
    if (signal === 'SIGCONT') this.paused = false;
  }

  /**
   * SIGTERM, and the wait for the exit: the graceful shutdown of a rolling update. A
   * process still there after `graceMs` is killed and the termination says so.
   */
  async terminate(graceMs = 30_000): Promise<Termination> {
    const child = this.child;
    if (!child || !this.running) throw new Error(`${this.name} is not running`);
    if (this.paused) this.signal('SIGCONT');
    this.note(`SIGTERM (pid ${child.pid})`);
    this.endAsked.add(child);
    const sent = Date.now();
    const gone = exitOf(child);
    child.kill('SIGTERM');
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      if (!exited(child)) child.kill('SIGKILL');
    }, graceMs);
    await gone;
    clearTimeout(timer);
    const at = Date.now();
    return { code: child.exitCode, signal: child.signalCode, at, ms: at - sent, forced };
  }

  /** A graceful restart: SIGTERM, wait for the exit, start with the slot's current faults. */
  async restart(): Promise<Termination | undefined> {
    const ended = this.running ? await this.terminate() : undefined;
    await this.start();
    return ended;
  }

  async stop(): Promise<void> {
    if (!this.child) return;
    this.endAsked.add(this.child);
    // A stopped process cannot act on SIGTERM until it is continued.
    if (this.paused && this.running) this.signal('SIGCONT');
    await stopProcess(this.child, 15_000);
  }

  /** Bytes in the slot's log now: `logSince` reads what the process writes after this. */
  logSize(): number {
    try {
      return statSync(this.options.logPath).size;
    } catch {
      return 0;
    }
  }

  logSince(offset: number): string {
    let fd: number | undefined;
    try {
      fd = openSync(this.options.logPath, 'r');
      const size = statSync(this.options.logPath).size;
      const buffer = Buffer.alloc(Math.max(0, size - offset));
      let read = 0;
      while (read < buffer.length) {
        const n = readSync(fd, buffer, read, buffer.length - read, offset + read);
        if (n === 0) break;
        read += n;
      }
      return buffer.subarray(0, read).toString('utf8');
    } catch {
      return '';
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
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
