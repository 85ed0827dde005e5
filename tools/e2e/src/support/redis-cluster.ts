import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findRedisServer, redisAnswers } from '@relaygram/queue';
import { stopProcess } from '@relaygram/testing';

const run = promisify(execFile);

export interface RedisCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...` */
  url: string;
  ports: number[];
  /** `redis-cli -p <port> <args...>` against one node. */
  cli(port: number, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port whose cluster bus port (port + 10000) is free as well. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
  throw new Error('no free pair of ports for a cluster node');
}

function redisCli(): string {
  const server = findRedisServer();
  if (!server) throw new Error('redis-server is not on PATH: the cluster test needs it');
  return server.replace(/redis-server$/, 'redis-cli');
}

/**
 * A Redis Cluster of `masters` nodes (no replicas) on loopback, made the way an operator
 * would: `redis-server --cluster-enabled yes` per node, then `redis-cli --cluster create`.
 * Everything lives in a temporary directory that `stop` removes.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server is not on PATH: the cluster test needs it');
  const cli = redisCli();
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cluster-'));
  const taken = new Set<number>();
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => stopProcess(child, 5_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort(taken);
      children.push(startNode(binary, dir, port));
      ports.push(port);
    }
    for (const port of ports)
      await waitFor(() => redisAnswers('127.0.0.1', port, 200), `node ${port}`);
    const nodeCli = async (port: number, ...args: string[]) =>
      (await run(cli, ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
    await createCluster(cli, ports, nodeCli);
    return {
      url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
      ports,
      cli: nodeCli,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One cluster-enabled node, in a directory of its own under `dir`, with nothing on disk. */
function startNode(binary: string, dir: string, port: number): ChildProcess {
  const nodeDir = join(dir, String(port));
  mkdirSync(nodeDir);
  return spawn(
    binary,
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      nodeDir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '5000',
      '--appendonly',
      'no',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
}

/** `redis-cli --cluster create` over the nodes, then waits until every node says the cluster is up. */
async function createCluster(
  cli: string,
  ports: number[],
  nodeCli: (port: number, ...args: string[]) => Promise<string>,
): Promise<void> {
  await run(cli, [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  // Every node must agree the cluster is up before a client maps its slots.
  for (const port of ports) {
    await waitFor(
      async () => (await nodeCli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      `cluster_state:ok on ${port}`,
    );
  }
}

async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
