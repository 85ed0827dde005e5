import { fork, type ChildProcess } from 'node:child_process';
import { extname, join } from 'node:path';
import { stopProcess, trackChild } from '@relaygram/testing';

/** The bench's own child programs (src/children/<name>.child.ts, or .js once built). */
export type ChildName =
  | 'load'
  | 'open-loop'
  | 'receiver'
  | 'emulator'
  | 'b1-server'
  | 'b2-worker'
  | 'b4-proxy'
  | 'b5-webhook';

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

/**
 * Node flags the children inherit: the TypeScript loader when the bench runs from
 * source. Profiling and inspector flags stay with the process they were given to.
 */
function inheritedExecArgv(): string[] {
  return process.execArgv.filter((arg) => !/^--(cpu-prof|heap-prof|inspect|prof)/.test(arg));
}

export function childScript(name: ChildName): string {
  return join(__dirname, '..', 'children', `${name}.child${extname(__filename)}`);
}

/**
 * A bench child process driven by request/reply messages over IPC. Load generators,
 * the receiver, the emulator and the baselines each run in one, so none shares an
 * event loop with what it measures or with the harness.
 */
export class BenchChild {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void }
  >();
  private exitError?: Error;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (message: Reply | { type: 'ready' }) => {
      if (!('id' in message)) return;
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      this.exitError = new Error(`${name} exited (${signal ?? `code ${code}`})`);
      for (const waiter of this.pending.values()) waiter.reject(this.exitError);
      this.pending.clear();
    });
  }

  static async start(
    script: ChildName,
    options: { name?: string; nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
  ): Promise<BenchChild> {
    const name = options.name ?? script;
    const child = fork(childScript(script), [], {
      execArgv: [...inheritedExecArgv(), ...(options.nodeArgs ?? [])],
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    trackChild(child, name);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: { type?: string }) => {
        if (message.type !== 'ready') return;
        cleanup();
        resolve();
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`${name} exited with code ${code} before it was ready`));
      };
      const cleanup = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    return new BenchChild(name, child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  call<T>(method: string, params: unknown = {}): Promise<T> {
    if (this.exitError) return Promise.reject(this.exitError);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, method, params });
    });
  }

  stop(): Promise<void> {
    return stopProcess(this.child);
  }
}
