import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
