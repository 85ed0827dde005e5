import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/**
 * The connection a process's writes go out on, as an opaque identity: its socket, which
 * ioredis replaces on every reconnect. Undefined while there is none.
 */
export type WriteConnection = object | undefined;

/**
 * `WAIT` where it means something. WAIT counts the replicas that hold every write made
 * before it *on its own connection*, so it must go out on the connection that carried
 * those writes: on a Redis Cluster, the connection to the master of the slot the keys
 * hash to. `connection()` names that connection, so a caller can tell whether its
 * writes and its WAIT went out on the same one (a reconnect or a failover in between
 * leaves a WAIT that covers nothing of what was written before).
 */
export interface ReplicaWait {
  connection(): WriteConnection;
  /** Replicas that acknowledged, within `timeoutMs`, the writes this connection made. */
  wait(replicas: number, timeoutMs: number): Promise<number>;
}

/** The ReplicaWait of the connection that writes `key` (any key of its slot) on this client. */
export function replicaWaitFor(redis: RedisClient, key: string): ReplicaWait {
  if (!(redis instanceof Cluster)) {
    const server = redis as Redis;
    return {
      connection: () => server.stream,
      wait: (replicas, timeoutMs) => server.wait(replicas, timeoutMs),
    };
  }
  const slot = calculateSlot(key);
  const master = (): Redis | undefined => {
    const nodeKey = redis.slots[slot]?.[0];
    if (nodeKey === undefined) return undefined;
    // The pool's own connection to that node: the one the slot's commands are sent on.
    return redis.nodes('master').find((node) => nodeKeyOf(node) === nodeKey);
  };
  return {
    connection: () => master()?.stream,
    wait: (replicas, timeoutMs) => {
      const node = master();
      if (!node) {
        return Promise.reject(new Error(`no master of slot ${slot} is known to this client`));
      }
      return node.wait(replicas, timeoutMs);
    },
  };
}

/** ioredis's key of a cluster node (`host:port`), as its slot table names it. */
function nodeKeyOf(node: Redis): string {
  return `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`;
}
