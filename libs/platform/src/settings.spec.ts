import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigService } from '@relaygram/config';
import { StartupError } from './app-definition';
import { readSettings } from './settings';

/** A port nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('readSettings', () => {
  let dir: string;
  let files = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'relaygram-settings-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function configFile(redisUrl: string): string {
    const path = join(dir, `relaygram-${++files}.yaml`);
    const text = `redis:\n  url: ${redisUrl}\n  prefix: settings-spec\nbots: []\nroutes: []\nclients: []\n`;
    writeFileSync(path, text);
    return path;
  }

  it('refuses a bad config with one line per problem, naming the key', async () => {
    const env = { RELAYGRAM_CONFIG: configFile('http://not-redis') };
    const refused = await readSettings('ingress', { env }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as StartupError).lines).toEqual([expect.stringMatching(/^redis\.url: /)]);
  });

  it('starts a redis-server in place of a silent local redis.url, and reloads find it too', async () => {
    const before = process.env.REDIS_URL;
    const env = { RELAYGRAM_CONFIG: configFile(`redis://127.0.0.1:${await freePort()}`) };
    const settings = await readSettings('standalone', {
      env,
      localRedis: { dataDir: join(dir, 'redis') },
    });
    try {
      const child = settings.localRedis!.url;
      expect(settings.env.redisUrl).toBe(child);
      expect(settings.config.redis.url).toBe(child);
      // The environment is left as it was given.
      expect(env).not.toHaveProperty('REDIS_URL');
      expect(process.env.REDIS_URL).toBe(before);
      // A reload reads process.env, where REDIS_URL is the test Redis: the override wins.
      const service = new ConfigService(settings.config, settings.env, 'standalone');
      const outcome = await service.reload();
      expect(outcome).toMatchObject({ ok: true, config: { redis: { url: child } } });
    } finally {
      await settings.localRedis?.stop();
    }
  });
});
