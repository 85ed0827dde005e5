import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replicatedRedis, type ReplicatedRedis } from '@relaygram/testing';
import { redisAnswers, startRedisServer } from './local-redis';
import { processAlive } from './process-alive';

describe('startRedisServer with a data directory', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'relaygram-local-redis-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('takes over a server still running on the same directory instead of starting a second one', async () => {
    const first = await startRedisServer({ dataDir: dir });
    try {
      // As after a kill -9 of the process that started it: the server runs on, its
      // AOF in `dir`. A second server on the same AOF would corrupt it.
      const second = await startRedisServer({ dataDir: dir });
      expect(second.url).toBe(first.url);
      expect(second.pid).toBe(first.pid);
      await second.stop();
      expect(processAlive(first.pid!)).toBe(false);
      const port = Number(new URL(first.url).port);
      expect(await redisAnswers('127.0.0.1', port, 200)).toBe(false);
    } finally {
      await first.stop();
    }
  });

  it('starts a new server when the recorded one is gone', async () => {
    const first = await startRedisServer({ dataDir: dir });
    await first.stop();
    const second = await startRedisServer({ dataDir: dir });
    try {
      expect(second.pid).not.toBe(first.pid);
      expect(await redisAnswers('127.0.0.1', Number(new URL(second.url).port), 500)).toBe(true);
    } finally {
      await second.stop();
    }
  });
});

describe('startRedisServer without a data directory', () => {
  it('leaves nothing on disk, even as a replica taking a full sync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relaygram-local-redis-cwd-'));
    const home = process.cwd();
    let linked: ReplicatedRedis | undefined;
    try {
      // Started from `dir`: a server that wrote in its working directory would write here.
      process.chdir(dir);
      try {
        linked = await replicatedRedis(() => startRedisServer());
      } finally {
        process.chdir(home);
      }
      const [, scratch] = (await linked.onReplica.config('GET', 'dir')) as [string, string];
      expect(readdirSync(dir)).toEqual([]);
      await linked.stop();
      // The snapshot it synced went to a scratch directory of its own, gone with it.
      expect(scratch).not.toBe(dir);
      expect(existsSync(scratch)).toBe(false);
    } finally {
      await linked?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
