import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  redisEndpoint,
  type ClusterRedisEndpoint,
  type SentinelRedisEndpoint,
} from '@relaygram/config';
import { FINISH_LUA } from '../scripts/finish.lua';
import { HEARTBEAT_LUA } from '../scripts/heartbeat.lua';
import { KILL_LANE_LUA } from '../scripts/kill-lane.lua';
import { DROP_JOB_LUA, ENSURE_DRAINING_LUA, REPAIR_LANE_LUA } from '../scripts/reconcile.lua';
import { RETIRE_LUA } from '../scripts/retire.lua';
import { START_LUA } from '../scripts/start.lua';
import { ENQUEUE_LUA } from '../scripts/enqueue.lua';
import { DELETE_DEAD_LUA, REPLAY_LUA } from '../scripts/dead-letter.lua';
import { OUTBOX_ENQUEUE_LUA } from '../scripts/outbox.lua';
import {
  BROADCAST_APPEND_LUA,
  BROADCAST_CLAIM_LUA,
  BROADCAST_CONTROL_LUA,
  BROADCAST_CREATE_LUA,
  BROADCAST_SETTLE_LUA,
  BROADCAST_START_LUA,
} from '../scripts/broadcast.lua';
import {
  PULL_DROP_LUA,
  PULL_EXPIRE_LUA,
  PULL_KILL_LUA,
  PULL_REPLAY_LUA,
  PULL_TAKE_LUA,
} from '../scripts/pull.lua';

type ScriptResult = Promise<unknown>;
type ScriptFn = (numKeys: number, ...args: (string | Buffer | number)[]) => ScriptResult;

/** The Relaygram scripts, registered on a client by `defineScripts` (EVALSHA, EVAL on a cache miss). */
export interface RelaygramScripts {
  rgEnqueue: ScriptFn;
  rgStartBuffer: ScriptFn;
  rgFinishBuffer: ScriptFn;
  rgRetireBuffer: ScriptFn;
  rgDropJob: ScriptFn;
  rgRepairLane: ScriptFn;
  rgEnsureDraining: ScriptFn;
  rgKillLane: ScriptFn;
  rgHeartbeat: ScriptFn;
  rgReplay: ScriptFn;
  rgDeleteDead: ScriptFn;
  rgOutboxEnqueue: ScriptFn;
  rgBroadcastCreate: ScriptFn;
  rgBroadcastAppend: ScriptFn;
  rgBroadcastStart: ScriptFn;
  rgBroadcastControl: ScriptFn;
  rgBroadcastClaim: ScriptFn;
  rgBroadcastSettle: ScriptFn;
  rgPullTakeBuffer: ScriptFn;
  rgPullDrop: ScriptFn;
  rgPullExpire: ScriptFn;
  rgPullKill: ScriptFn;
  rgPullReplay: ScriptFn;
}

/** One server (or a Sentinel-managed master), or a Redis Cluster: see `redis.url`. */
export type RedisClient = Redis | Cluster;
export type RelaygramRedis = RedisClient & RelaygramScripts;

const SCRIPTS: Record<string, string> = {
  rgEnqueue: ENQUEUE_LUA,
  rgStart: START_LUA,
  rgFinish: FINISH_LUA,
  rgRetire: RETIRE_LUA,
  rgDropJob: DROP_JOB_LUA,
  rgRepairLane: REPAIR_LANE_LUA,
  rgEnsureDraining: ENSURE_DRAINING_LUA,
  rgKillLane: KILL_LANE_LUA,
  rgHeartbeat: HEARTBEAT_LUA,
  rgReplay: REPLAY_LUA,
  rgDeleteDead: DELETE_DEAD_LUA,
  rgOutboxEnqueue: OUTBOX_ENQUEUE_LUA,
  rgBroadcastCreate: BROADCAST_CREATE_LUA,
  rgBroadcastAppend: BROADCAST_APPEND_LUA,
  rgBroadcastStart: BROADCAST_START_LUA,
  rgBroadcastControl: BROADCAST_CONTROL_LUA,
  rgBroadcastClaim: BROADCAST_CLAIM_LUA,
  rgBroadcastSettle: BROADCAST_SETTLE_LUA,
  rgPullTake: PULL_TAKE_LUA,
  rgPullDrop: PULL_DROP_LUA,
  rgPullExpire: PULL_EXPIRE_LUA,
  rgPullKill: PULL_KILL_LUA,
  rgPullReplay: PULL_REPLAY_LUA,
};

export function defineScripts(client: RedisClient): RelaygramRedis {
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
  /**
   * Fail a command Redis has not answered within this time ("Command timed out"): a
   * Redis that stops answering without closing the connection must not hold requests.
   * The command may still run later; callers treat it like a lost connection.
   */
  commandTimeoutMs?: number;
  /** Connection errors (each failed reconnect); ignored when absent. */
  onError?: (error: Error) => void;
}

/** Reconnect quickly at first, then every 2 s: Redis restarts should heal on their own. */
const reconnectDelay = (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * A client for any `redis.url` form (see `parseRedisUrl`): `redis://`/`rediss://`, a
 * Sentinel-managed master (`redis+sentinel://`) or a Redis Cluster (`redis+cluster://`),
 * with the Relaygram scripts defined. On a cluster every key of one install must share a
 * slot (`redis.prefix: "{relaygram}"`), so the multi-key scripts, pipelines and BullMQ's
 * own scripts stay legal.
 */
export function createRedis(url: string, options: CreateRedisOptions = {}): RelaygramRedis {
  const endpoint = redisEndpoint(url);
  const blocking = options.mode === 'blocking';
  const connection: RedisOptions = {
    connectionName: options.connectionName,
    maxRetriesPerRequest: blocking ? null : 1,
    ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
  };
  const serverOptions: RedisOptions = {
    ...connection,
    lazyConnect: options.lazyConnect,
    enableOfflineQueue: blocking,
    enableAutoPipelining: options.autoPipelining === true,
    retryStrategy: reconnectDelay,
  };
  const client =
    endpoint.kind === 'cluster'
      ? new Cluster([...endpoint.nodes], clusterOptions(endpoint, connection, options, blocking))
      : endpoint.kind === 'sentinel'
        ? new Redis({ ...sentinelOptions(endpoint), ...serverOptions })
        : new Redis(endpoint.url, serverOptions);
  // ioredis emits 'error' on every failed reconnect; without a listener Node prints
  // each one as an unhandled error event. Callers that want them pass onError.
  client.on('error', options.onError ?? (() => undefined));
  return defineScripts(client);
}

function sentinelOptions(endpoint: SentinelRedisEndpoint): RedisOptions {
  return {
    sentinels: endpoint.sentinels.map(({ host, port }) => ({ host, port })),
    name: endpoint.name,
    db: endpoint.db,
    username: endpoint.username,
    password: endpoint.password,
    sentinelUsername: endpoint.sentinelUsername,
    sentinelPassword: endpoint.sentinelPassword,
    sentinelRetryStrategy: reconnectDelay,
    ...(endpoint.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
  };
}

function clusterOptions(
  endpoint: ClusterRedisEndpoint,
  connection: RedisOptions,
  options: CreateRedisOptions,
  blocking: boolean,
): ClusterOptions {
  return {
    lazyConnect: options.lazyConnect,
    enableOfflineQueue: blocking,
    enableAutoPipelining: options.autoPipelining === true,
    clusterRetryStrategy: reconnectDelay,
    // ioredis's ready check fails while the cluster says `cluster_state:fail` (during a
    // failover), and the client then reconnects without ever settling the `connect()`
    // that ran the check. A BullMQ worker awaits that promise to restore its blocking
    // connection after a stalled wait, and would stop taking jobs for good. Without the
    // check the client is ready at once; commands that meet CLUSTERDOWN are retried.
    enableReadyCheck: false,
    redisOptions: {
      ...connection,
      username: endpoint.username,
      password: endpoint.password,
      ...(endpoint.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * Resolves when the client is connected, false after `timeoutMs`. Request-mode clients
 * refuse commands while disconnected instead of queueing them, so callers that start
 * up wait here first.
 */
export function waitForRedis(client: RedisClient, timeoutMs = 5000): Promise<boolean> {
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
