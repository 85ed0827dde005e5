import { spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { processAlive } from './process-alive';

export interface LocalRedis {
  url: string;
  /** PID of the redis-server we started, or undefined when an existing one answered. */
  pid?: number;
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Keep an append-only file in this directory; without it nothing is written to disk. */
  dataDir?: string;
  port?: number;
  /** How long to wait for the new server to answer PING. */
  readyTimeoutMs?: number;
  /**
   * Send the server SIGTERM when this process exits without having stopped it (a failed
   * start, process.exit on a stuck shutdown): it flushes its AOF and exits, never orphaned.
   */
  stopOnExit?: boolean;
}

export class RedisServerNotFoundError extends Error {
  constructor(address = '127.0.0.1:6379') {
    super(
      `No Redis answers on ${address} and there is no redis-server on PATH. ` +
        'Install one (apt-get install redis-server, or brew install redis), ' +
        'run one in Docker (`docker compose up redis` serves the compose apps; for this ' +
        'process publish it: `docker compose run -d -p 127.0.0.1:6379:6379 redis`), ' +
        'or set REDIS_URL.',
    );
    this.name = 'RedisServerNotFoundError';
  }
}

/** True when something on host:port answers a RESP PING within the timeout. */
export function redisAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      const text = chunk.toString('utf8');
      // A protected server answers -NOAUTH: it is a Redis, just not ours to use.
      done(text.startsWith('+PONG') || text.startsWith('-NOAUTH'));
    });
  });
}

export function findRedisServer(): string | undefined {
  // eslint-disable-next-line no-restricted-syntax -- PATH lookup, not configuration
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server as a child of this process on loopback. With `dataDir` it keeps
 * an AOF (appendfsync everysec) there, so a crash of this process loses nothing Redis
 * acknowledged; without it the server keeps nothing once it has exited.
 */
export async function startRedisServer(options: StartRedisOptions = {}): Promise<LocalRedis> {
  const binary = findRedisServer();
  if (!binary) throw new RedisServerNotFoundError();
  if (options.dataDir) {
    // A server left behind by a process killed with -9 still owns the AOF in this
    // directory; a second one writing the same file would corrupt it. Take it over.
    const orphan = await orphanedServer(options.dataDir);
    if (orphan) return orphan;
  }
  const port = options.port ?? (await freePort());
  let scratch: string | undefined;
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--save',
    '',
    '--protected-mode',
    'yes',
  ];
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    args.push('--dir', options.dataDir, '--appendonly', 'yes', '--appendfsync', 'everysec');
    args.push('--pidfile', join(options.dataDir, PIDFILE));
  } else {
    // As a replica (tests link two) it writes the primary's snapshot into its `dir`
    // before loading it: a scratch directory of its own, removed once it exits, not
    // the working directory.
    scratch = mkdtempSync(join(tmpdir(), 'relaygram-redis-'));
    args.push('--dir', scratch, '--appendonly', 'no');
  }
  args.push('--maxmemory-policy', 'noeviction');
  const child: ChildProcess = spawn(binary, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own process group: a Ctrl-C in the terminal reaches only the app, which stops
    // the server itself once it has closed (it still needs Redis while closing).
    detached: options.stopOnExit === true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      resolve();
    }),
  );
  const killOnExit = () => child.kill('SIGTERM');
  if (options.stopOnExit) {
    process.once('exit', killOnExit);
    void exited.then(() => process.off('exit', killOnExit));
  }

  const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
  while (!(await redisAnswers('127.0.0.1', port, 200))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `redis-server did not start on 127.0.0.1:${port}: ${stderr.trim() || 'no output'}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  if (options.dataDir) {
    writeFileSync(join(options.dataDir, SERVER_FILE), JSON.stringify({ pid: child.pid, port }));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      // SIGTERM lets redis-server flush its AOF before it exits.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const PIDFILE = 'redis.pid';
/** Where a started server is recorded ({ pid, port }), to find it again after a crash. */
const SERVER_FILE = 'relaygram-redis.json';

/** The server recorded in `dataDir`, when it still runs and answers. */
async function orphanedServer(dataDir: string): Promise<LocalRedis | undefined> {
  let recorded: { pid?: unknown; port?: unknown };
  try {
    recorded = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as typeof recorded;
  } catch {
    return undefined;
  }
  const { pid, port } = recorded;
  if (typeof pid !== 'number' || typeof port !== 'number' || !processAlive(pid)) return undefined;
  if (!(await redisAnswers('127.0.0.1', port, 500))) return undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    pid,
    async stop() {
      if (!processAlive(pid)) return;
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 5_000;
      while (processAlive(pid) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    },
  };
}

/**
 * The Redis to use when none is configured: 127.0.0.1:6379 if it answers, else a
 * redis-server child (see startRedisServer).
 */
export async function localRedis(options: StartRedisOptions = {}): Promise<LocalRedis> {
  if (await redisAnswers('127.0.0.1', 6379)) {
    return { url: 'redis://127.0.0.1:6379', stop: async () => undefined };
  }
  return startRedisServer(options);
}

/** The host and port of a plain `redis://` URL on this machine, else undefined. */
export function loopbackRedis(url: string): { host: string; port: number } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (parsed.protocol !== 'redis:' || !['127.0.0.1', 'localhost', '::1'].includes(host)) {
    return undefined;
  }
  return { host, port: parsed.port ? Number(parsed.port) : 6379 };
}

/**
 * The Redis of a standalone install that names none elsewhere: with no REDIS_URL and
 * `redis.url` on this machine (127.0.0.1:6379 as shipped), that address when it answers
 * (undefined: use it), else a redis-server child from PATH on a free loopback port with
 * its AOF in `options.dataDir`. Any other `redis.url` is used as configured (undefined).
 * Throws RedisServerNotFoundError when PATH has no redis-server.
 */
export async function redisChildIfNeeded(
  configured: { envUrl?: string; url: string },
  options: StartRedisOptions,
): Promise<LocalRedis | undefined> {
  if (configured.envUrl) return undefined;
  const local = loopbackRedis(configured.url);
  if (!local || (await redisAnswers(local.host, local.port))) return undefined;
  if (!findRedisServer()) throw new RedisServerNotFoundError(`${local.host}:${local.port}`);
  return startRedisServer(options);
}
