import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { findRedisServer, redisAnswers } from '@relaygram/queue';
import { sleep, stamp } from './app-process';
import { exited, killHard, stopProcess, trackChild, stablePort } from '@relaygram/testing';

/**
 * A private redis-server for the run, configured as shipped in docker compose: AOF with
 * `appendfsync everysec`, `noeviction`. It can be killed with SIGKILL and started again
 * on the same port and the same AOF, which is what a crash of the Redis process (not of
 * the machine) looks like: every write Redis acknowledged is in the AOF, because Redis
 * writes it to the file (the page cache) before it answers, and only the fsync is
 * once a second.
 */
export class RedisProcess {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;

  private constructor(
    readonly binary: string,
    readonly port: number,
    readonly dataDir: string,
    readonly logPath: string,
  ) {}

  static async create(dataDir: string, logPath: string): Promise<RedisProcess> {
    const binary = findRedisServer();
    if (!binary) {
      throw new Error(
        'the chaos run needs redis-server on PATH (it kills and restarts its own Redis): ' +
          'apt-get install redis-server, or brew install redis',
      );
    }
    mkdirSync(dataDir, { recursive: true });
    return new RedisProcess(binary, await stablePort(), dataDir, logPath);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && !exited(this.child);
  }

  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    const log = openSync(this.logPath, 'a');
    writeSync(log, `\n--- chaos: start #${this.starts + 1} of redis at ${stamp()}\n`);
    const child = spawn(
      this.binary,
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--dir',
        this.dataDir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
        '--protected-mode',
        'yes',
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    trackChild(child, 'redis-server');
    this.child = child;
    this.starts++;
    const deadline = Date.now() + timeoutMs;
    // A restart answers PING only once the AOF is loaded (LOADING errors before that).
    while (!(await redisAnswers('127.0.0.1', this.port, 300))) {
      if (exited(child)) throw new Error(`redis-server exited at start; see ${this.logPath}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer in ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  async kill9(): Promise<void> {
    if (!this.child || !this.running) return;
    this.note(`kill -9 (pid ${this.child.pid})`);
    this.kills++;
    await killHard(this.child);
  }

  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child, 10_000);
  }

  private note(text: string): void {
    const log = openSync(this.logPath, 'a');
    writeSync(log, `--- chaos: ${text} at ${stamp()}\n`);
    closeSync(log);
  }
}
