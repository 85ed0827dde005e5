import { Redis } from 'ioredis';
import { eventually } from '../eventually';

/** A redis-server a test started (`startRedisServer` of `@relaygram/queue`). */
export interface StartedRedis {
  url: string;
  pid?: number;
  stop(): Promise<void>;
}

/** A primary and one replica of it, both of the test's own, and a client on the replica. */
export interface ReplicatedRedis {
  primary: StartedRedis;
  replica: StartedRedis;
  /** Reads what the replica holds. */
  onReplica: Redis;
  /** SIGSTOP: the replica keeps its connections and acknowledges nothing. */
  freezeReplica(): void;
  thawReplica(): void;
  stop(): Promise<void>;
}

/**
 * Links two started servers as primary and replica (REPLICAOF over loopback) and waits
 * until the link is up. `start` is `startRedisServer` (this library depends on no
 * Relaygram lib that starts servers).
 */
export async function replicatedRedis(
  start: () => Promise<StartedRedis>,
): Promise<ReplicatedRedis> {
  const primary = await start();
  const replica = await start();
  const onReplica = new Redis(replica.url, { connectionName: 'test-replica-read' });
  const pid = () => {
    if (!replica.pid) throw new Error('the replica was not started by this test');
    return replica.pid;
  };
  let frozen = false;
  const replicated: ReplicatedRedis = {
    primary,
    replica,
    onReplica,
    freezeReplica() {
      process.kill(pid(), 'SIGSTOP');
      frozen = true;
    },
    thawReplica() {
      if (frozen) process.kill(pid(), 'SIGCONT');
      frozen = false;
    },
    async stop() {
      replicated.thawReplica();
      onReplica.disconnect();
      await replica.stop();
      await primary.stop();
    },
  };
  try {
    await onReplica.replicaof('127.0.0.1', Number(new URL(primary.url).port));
    await eventually(
      async () => (await onReplica.info('replication')).includes('master_link_status:up'),
      { timeoutMs: 10_000, what: 'the replica linked to its primary' },
    );
  } catch (error) {
    await replicated.stop();
    throw error;
  }
  return replicated;
}
