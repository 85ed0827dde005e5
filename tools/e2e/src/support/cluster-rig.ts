import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingReceiver, TelegramEmulator } from '@relaygram/testing';
import { stopAll, type AppProcess } from './app-process';
import { startRedisCluster, type ClusterShape, type RedisCluster } from './redis-cluster';

/** What a cluster suite runs on; filled before its tests, stopped after them. */
export interface ClusterRig {
  cluster: RedisCluster;
  emulator: TelegramEmulator;
  receiver: RecordingReceiver;
  /** Scratch directory for the install's config. */
  dir: string;
  /** The apps the suite started: stopped after it, whatever happened. */
  apps: AppProcess[];
}

/**
 * A Redis Cluster of 3 masters, the Telegram emulator, a recording receiver and a
 * scratch directory for the suite it is called in (its beforeAll and afterAll).
 */
export function useClusterRig(shape: ClusterShape & { webhookRetryDelayMs: number }): ClusterRig {
  const rig = { apps: [] as AppProcess[] } as ClusterRig;
  beforeAll(async () => {
    rig.cluster = await startRedisCluster(3, shape);
    rig.emulator = await TelegramEmulator.start({ webhookRetryDelayMs: shape.webhookRetryDelayMs });
    rig.receiver = await RecordingReceiver.start();
    rig.dir = mkdtempSync(join(tmpdir(), 'relaygram-cluster-test-'));
  }, 60_000);
  afterAll(async () => {
    await stopAll(rig.apps);
    await rig.receiver?.stop();
    await rig.emulator?.stop();
    await rig.cluster?.stop();
    if (rig.dir) rmSync(rig.dir, { recursive: true, force: true });
  }, 60_000);
  return rig;
}
