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
  /** Every node's port, masters and replicas. */
  ports: number[];
  /** `redis-cli -p <port> <args...>` against one node. */
  cli(port: number, ...args: string[]): Promise<string>;
  /**
   * The node serving `slot` as master now, as the first node that answers sees it;
   * undefined while none does (its master failed and no replica has taken over yet).
   */
  masterOf(slot: number): Promise<number | undefined>;
  /** The ports of the replicas of the master at `port`. */
  replicasOf(port: number): Promise<number[]>;
  /** kill -9 of one node. */
  kill(port: number): void;
  /** SIGSTOP, then SIGCONT: a node that holds its connections and answers nothing meanwhile. */
  freeze(port: number): void;
  thaw(port: number): void;
  /**
   * Starts a killed node again, empty, from its cluster config: it rejoins as a replica
   * of whichever node took its slots over, as a failed machine does once it is back.
   */
  restart(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterShape {
  /** Replicas per master (default 0). */
  replicas?: number;
  /** `cluster-node-timeout`: how long a master is unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
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
 * A Redis Cluster of `masters` masters, each with `replicas` replicas, on loopback, made
 * the way an operator would: `redis-server --cluster-enabled yes` per node, then
 * `redis-cli --cluster create`. Everything lives in a temporary directory that `stop`
 * removes.
 */
export async function startRedisCluster(
  masters = 3,
  shape: ClusterShape = {},
): Promise<RedisCluster> {
  const replicas = shape.replicas ?? 0;
  const nodeTimeoutMs = shape.nodeTimeoutMs ?? 5_000;
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server is not on PATH: the cluster test needs it');
  const cli = redisCli();
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cluster-'));
  const taken = new Set<number>();
  const children = new Map<number, ChildProcess>();
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all([...children.values()].map((child) => stopProcess(child, 5_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await clusterPort(taken);
      children.set(port, startNode(binary, dir, port, nodeTimeoutMs));
      ports.push(port);
    }
    for (const port of ports)
      await waitFor(() => redisAnswers('127.0.0.1', port, 200), `node ${port}`);
    const nodeCli = async (port: number, ...args: string[]) =>
      (await run(cli, ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
    await createCluster(cli, ports, replicas, nodeCli);
    const masterOf = async (slot: number) => {
      for (const port of ports) {
        const child = children.get(port);
        if (child?.exitCode !== null || child.signalCode !== null) continue;
        const nodes = await nodeCli(port, 'cluster', 'nodes').catch(() => undefined);
        if (nodes !== undefined) return slotOwner(nodes, slot);
      }
      throw new Error('no node of the cluster answers');
    };
    return {
      url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
      ports,
      cli: nodeCli,
      masterOf,
      replicasOf: async (port) => replicaPorts(await nodeCli(port, 'cluster', 'nodes'), port),
      kill: (port) => {
        children.get(port)?.kill('SIGKILL');
      },
      freeze: (port) => {
        children.get(port)?.kill('SIGSTOP');
      },
      thaw: (port) => {
        children.get(port)?.kill('SIGCONT');
      },
      restart: async (port) => {
        children.set(port, startNode(binary, dir, port, nodeTimeoutMs));
        await waitFor(() => redisAnswers('127.0.0.1', port, 200), `node ${port} restarted`);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The port of the master serving `slot`, from `CLUSTER NODES` (one node per line: id,
 * `ip:port@bus`, flags, master id, ping, pong, epoch, link state, then its slots as
 * `a-b` ranges or single slots). A master flagged `fail` no longer serves.
 */
export function slotOwner(nodes: string, slot: number): number | undefined {
  for (const line of nodes.trim().split('\n')) {
    const [, address, flags, , , , , , ...slots] = line.trim().split(' ');
    const roles = (flags ?? '').split(',');
    if (!roles.includes('master') || roles.includes('fail')) continue;
    const owns = slots.some((range) => {
      const [first, last = first] = range.split('-').map(Number);
      return first !== undefined && last !== undefined && slot >= first && slot <= last;
    });
    if (owns) return Number(/:(\d+)@/.exec(address ?? '')?.[1]);
  }
  return undefined;
}

/** The ports of the replicas of the node at `port`, from `CLUSTER NODES`. */
export function replicaPorts(nodes: string, port: number): number[] {
  const rows = nodes
    .trim()
    .split('\n')
    .map((line) => line.trim().split(' '));
  const portOf = (address: string | undefined) => Number(/:(\d+)@/.exec(address ?? '')?.[1]);
  const id = rows.find((row) => portOf(row[1]) === port)?.[0];
  return rows
    .filter((row) => (row[2] ?? '').split(',').includes('slave') && row[3] === id)
    .map((row) => portOf(row[1]));
}

/** One cluster-enabled node, in a directory of its own under `dir`, with nothing on disk. */
function startNode(binary: string, dir: string, port: number, nodeTimeoutMs: number): ChildProcess {
  const nodeDir = join(dir, String(port));
  mkdirSync(nodeDir, { recursive: true });
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
      String(nodeTimeoutMs),
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
  replicas: number,
  nodeCli: (port: number, ...args: string[]) => Promise<string>,
): Promise<void> {
  await run(cli, [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ]);
  // Every node must agree the cluster is up before a client maps its slots.
  for (const port of ports) {
    await waitFor(
      async () => (await nodeCli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      `cluster_state:ok on ${port}`,
    );
  }
  // A replica counts for WAIT only once it has synced with its master.
  for (const port of ports) {
    await waitFor(async () => {
      const info = await nodeCli(port, 'info', 'replication');
      return info.includes('role:master') || info.includes('master_link_status:up');
    }, `replica ${port} in sync`);
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
