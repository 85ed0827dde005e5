import { Redis, type RedisOptions } from 'ioredis';
import { BEGIN_LUA, DETACH_LUA, FINISH_LUA, RESCHEDULE_LUA, RETRY_LUA } from '../scripts/lane.lua';
import { ENQUEUE_LUA } from '../scripts/enqueue.lua';
import { DELETE_DEAD_LUA, REPLAY_LUA } from '../scripts/dead-letter.lua';

type ScriptResult = Promise<unknown>;
type ScriptFn = (numKeys: number, ...args: (string | Buffer | number)[]) => ScriptResult;

/** The Relaygram scripts, registered on a client by `defineScripts` (EVALSHA, EVAL on a cache miss). */
export interface RelaygramScripts {
  rgEnqueue: ScriptFn;
  rgBegin: ScriptFn;
  rgBeginBuffer: ScriptFn;
  rgFinish: ScriptFn;
  rgFinishBuffer: ScriptFn;
  rgRetry: ScriptFn;
  rgDetachBuffer: ScriptFn;
  rgReschedule: ScriptFn;
  rgReplay: ScriptFn;
  rgDeleteDead: ScriptFn;
}

export type RelaygramRedis = Redis & RelaygramScripts;

const SCRIPTS: Record<string, string> = {
  rgEnqueue: ENQUEUE_LUA,
  rgBegin: BEGIN_LUA,
  rgFinish: FINISH_LUA,
  rgRetry: RETRY_LUA,
  rgDetach: DETACH_LUA,
  rgReschedule: RESCHEDULE_LUA,
  rgReplay: REPLAY_LUA,
  rgDeleteDead: DELETE_DEAD_LUA,
};

export function defineScripts(client: Redis): RelaygramRedis {
  for (const [name, lua] of Object.entries(SCRIPTS)) {
    if (!(name in client)) client.defineCommand(name, { lua });
  }
  return client as RelaygramRedis;
}

export interface CreateRedisOptions {
  /** Shown in CLIENT LIST, to tell Relaygram's connections apart. */
  connectionName?: string;
  /**
   * `request`: fail fast while Redis is away (the webhook answers 503 and Telegram
   * retries); `blocking`: wait for Redis forever (BullMQ workers require it).
   */
  mode?: 'request' | 'blocking';
  /** Don't connect until the first command (tools that may never talk to Redis). */
  lazyConnect?: boolean;
  /**
   * Send the commands issued in one event-loop tick as one write (ioredis auto-pipelining):
   * busy workers with many jobs in flight make far fewer syscalls.
   */
  autoPipelining?: boolean;
  /** Connection errors (each failed reconnect); ignored when absent. */
  onError?: (error: Error) => void;
}

/** A client for `redis://` and `rediss://` URLs, with the Relaygram scripts defined. */
export function createRedis(url: string, options: CreateRedisOptions = {}): RelaygramRedis {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`redis.url: unsupported scheme ${parsed.protocol} (use redis:// or rediss://)`);
  }
  const blocking = options.mode === 'blocking';
  const redisOptions: RedisOptions = {
    connectionName: options.connectionName,
    lazyConnect: options.lazyConnect,
    maxRetriesPerRequest: blocking ? null : 1,
    enableOfflineQueue: blocking,
    enableAutoPipelining: options.autoPipelining === true,
    // Reconnect quickly at first, then every 2 s: Redis restarts should heal on their own.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  };
  const client = new Redis(url, redisOptions);
  // ioredis emits 'error' on every failed reconnect; without a listener Node prints
  // each one as an unhandled error event. Callers that want them pass onError.
  client.on('error', options.onError ?? (() => undefined));
  return defineScripts(client);
}

/**
 * Resolves when the client is connected, false after `timeoutMs`. Request-mode clients
 * refuse commands while disconnected instead of queueing them, so callers that start
 * up wait here first.
 */
export function waitForRedis(client: Redis, timeoutMs = 5000): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.on('ready', onReady);
  });
}
