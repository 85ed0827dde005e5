import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import {
  findRedisServer,
  freePort,
  redisAnswers,
  startRedisServer,
  type LocalRedis,
} from './local-redis';
import { createRedis, waitForRedis } from './redis-client';

describe('createRedis', () => {
  it('makes a cluster client for redis+cluster://, with the Relaygram scripts', async () => {
    const client = createRedis('redis+cluster://:pw@127.0.0.1:7000,127.0.0.1:7001', {
      lazyConnect: true,
      mode: 'blocking',
      connectionName: 'test-cluster',
    });
    try {
      expect(client).toBeInstanceOf(Cluster);
      expect(typeof client.rgEnqueue).toBe('function');
      const cluster = client as Cluster;
      // ioredis keeps the seed nodes in a private field; the nodes are what the URL listed.
      expect((cluster as unknown as { startupNodes: unknown }).startupNodes).toEqual([
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ]);
      // BullMQ workers need maxRetriesPerRequest null on the nodes' connections.
      expect(cluster.options.redisOptions).toMatchObject({
        password: 'pw',
        maxRetriesPerRequest: null,
        connectionName: 'test-cluster',
      });
    } finally {
      client.disconnect();
    }
  });

  it('refuses a URL it cannot read, without repeating it', () => {
    expect(() => createRedis('redis+sentinel://user:hunter2@s1:26379')).toThrow(
      /^redis\.url: .*needs the master name/,
    );
    expect(() => createRedis('redis+sentinel://user:hunter2@s1:26379')).not.toThrow(/hunter2/);
  });

  describe('redis+sentinel://', () => {
    let master: LocalRedis;
    let sentinel: ChildProcess;
    let dir: string;
    let sentinelPort: number;

    beforeAll(async () => {
      master = await startRedisServer();
      dir = mkdtempSync(join(tmpdir(), 'relaygram-sentinel-'));
      sentinelPort = await freePort();
      const conf = join(dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${sentinelPort}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor relaymaster 127.0.0.1 ${new URL(master.url).port} 1`,
          '',
        ].join('\n'),
      );
      const binary = findRedisServer();
      if (!binary) throw new Error('this test needs redis-server on PATH');
      sentinel = spawn(binary, [conf, '--sentinel'], { stdio: 'ignore' });
      const deadline = Date.now() + 10_000;
      while (!(await redisAnswers('127.0.0.1', sentinelPort, 200))) {
        if (Date.now() > deadline) throw new Error('the sentinel did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    });

    afterAll(async () => {
      if (sentinel && sentinel.exitCode === null) {
        const exited = new Promise((resolve) => sentinel.once('exit', resolve));
        sentinel.kill('SIGTERM');
        await exited;
      }
      await master?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('asks the Sentinels for the master and talks to it', async () => {
      const client = createRedis(`redis+sentinel://127.0.0.1:${sentinelPort}/relaymaster/3`, {
        connectionName: 'test-sentinel',
      });
      const direct = new Redis(master.url, { db: 3 });
      try {
        expect(client).toBeInstanceOf(Redis);
        expect(await waitForRedis(client, 5_000)).toBe(true);
        await client.set('sentinel-check', 'through the sentinel');
        // The same key, read from the master directly, in the database the URL named.
        expect(await direct.get('sentinel-check')).toBe('through the sentinel');
        expect((await client.role())[0]).toBe('master');
      } finally {
        await direct.del('sentinel-check');
        direct.disconnect();
        await client.quit();
      }
    });
  });
});
