import { createRedis, type RelaygramRedis } from '@relaygram/queue';
import { eventually } from './support/app-process';
import { startRedisCluster, type RedisCluster } from './support/redis-cluster';

const clusterState = async (cluster: RedisCluster, port: number) =>
  /cluster_state:(\w+)/.exec(await cluster.cli(port, 'cluster', 'info'))?.[1];

/**
 * The clients of `createRedis` on a Redis Cluster that is failing over. A BullMQ worker
 * whose blocking wait stalls resets its connection (disconnect, then `connect()`) and
 * takes no job until that `connect()` settles: if it never does, the worker stops for
 * good while its process looks healthy.
 */
describe('createRedis on a Redis Cluster while a master is down', () => {
  let cluster: RedisCluster;
  let client: RelaygramRedis | undefined;

  beforeAll(async () => {
    cluster = await startRedisCluster(3, { nodeTimeoutMs: 1_000 });
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  }, 60_000);

  it('settles a reconnect begun while the cluster state is fail', async () => {
    client = createRedis(cluster.url, { mode: 'blocking', connectionName: 'failover-client' });
    await client.set('{probe}:before', '1');

    // No replica takes over: the others mark the cluster failed until the node is back.
    const [down, witness] = cluster.ports as [number, number];
    cluster.kill(down);
    await eventually(
      async () => (await clusterState(cluster, witness)) === 'fail',
      'cluster_state:fail',
      { timeoutMs: 15_000, intervalMs: 100 },
    );

    const ended = new Promise((resolve) => client?.once('end', resolve));
    client.disconnect();
    await ended;
    let settled = false;
    const reconnected = client.connect().finally(() => {
      settled = true;
    });
    // Long enough for the client to have met the failed cluster while connecting.
    await new Promise((r) => setTimeout(r, 1_500));

    await cluster.restart(down);
    await eventually(
      async () => (await clusterState(cluster, witness)) === 'ok',
      'cluster_state:ok',
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    await eventually(() => settled, 'the reconnect settled', { timeoutMs: 10_000 });
    await reconnected;
    // The client serves again once its slot map has caught up with the cluster's.
    await eventually(
      async () => (await client?.set('{probe}:after', '1').catch(() => null)) === 'OK',
      'a write through the client',
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(await client.get('{probe}:after')).toBe('1');
  }, 90_000);
});
