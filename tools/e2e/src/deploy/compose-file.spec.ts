import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig, readRuntimeEnv, type ServiceName } from '@relaygram/config';
import { RELAYGRAM_ENV } from './relaygram-env';

const REPO = join(__dirname, '..', '..', '..', '..');
const text = readFileSync(join(REPO, 'docker-compose.yml'), 'utf8');

interface ComposeService {
  image?: string;
  build?: { context: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[]; interval?: string; retries?: number };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
}

// Compose reads YAML merge keys (`<<: *relaygram`), a YAML 1.1 feature.
const compose = parse(text, { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const APPS = ['ingress', 'dispatcher', 'gateway'] as const;

/** `${NAME:-default}` as Compose substitutes it when NAME is unset. */
function substitute(value: string): string {
  return value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
}

const seconds = (duration: string) => Number(/^(\d+)s$/.exec(duration)?.[1] ?? Number.NaN);

describe('docker-compose.yml', () => {
  it('runs redis and the three apps, each built from the Dockerfile for its app', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'dispatcher',
      'gateway',
      'ingress',
      'redis',
    ]);
    for (const app of APPS) {
      expect(compose.services[app].build).toEqual({ context: '.', args: { APP: app } });
    }
  });

  it('keeps Redis durable: AOF fsynced every second, no eviction, data on a volume', () => {
    const redis = compose.services.redis;
    const flags = (redis.command ?? []).join(' ');
    expect(flags).toContain('--appendonly yes');
    expect(flags).toContain('--appendfsync everysec');
    expect(flags).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes).toEqual(['redis-data:/data']);
    expect(Object.keys(compose.volumes)).toEqual(['redis-data']);
    // The crash window of everysec, and how to close it, are written down.
    expect(text).toMatch(/crash of the whole machine[\s\S]*can lose the[\s\S]*last second/);
    expect(text).toContain('always');
  });

  it('gives every service a healthcheck and a restart policy', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect({ name, restart: service.restart }).toEqual({ name, restart: 'unless-stopped' });
      expect(service.healthcheck?.test[0]).toBe('CMD');
    }
    expect(compose.services.redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const app of APPS) {
      const { environment, healthcheck, depends_on } = compose.services[app];
      const probe = healthcheck!.test.join(' ');
      expect(probe).toContain(`http://127.0.0.1:${environment!.PORT}/health/ready`);
      expect(depends_on).toEqual({ redis: { condition: 'service_healthy' } });
    }
  });

  it('publishes only the ingress and gateway ports, each on its PORT', () => {
    const published = Object.entries(compose.services)
      .filter(([, service]) => service.ports?.length)
      .map(([name]) => name);
    expect(published.sort()).toEqual(['gateway', 'ingress']);
    for (const app of ['ingress', 'gateway'] as const) {
      const { ports, environment } = compose.services[app];
      expect(ports).toEqual([`${environment!.PORT}:${environment!.PORT}`]);
    }
  });

  it('gives each app time to finish in-flight work before Docker kills it', () => {
    // The apps give in-flight work 25 s after SIGTERM (SHUTDOWN_GRACE_MS).
    for (const app of APPS) {
      expect(seconds(compose.services[app].stop_grace_period ?? '10s')).toBeGreaterThan(25);
    }
  });

  it('sets only variables Relaygram reads, and Relaygram reads them as meant', () => {
    for (const app of APPS) {
      const environment = Object.fromEntries(
        Object.entries(compose.services[app].environment ?? {}).map(([k, v]) => [k, substitute(v)]),
      );
      expect(Object.keys(environment).filter((name) => !RELAYGRAM_ENV.includes(name))).toEqual([]);

      const runtime = readRuntimeEnv(app as ServiceName, environment);
      expect(runtime).toMatchObject({
        port: Number(environment.PORT),
        adminHost: '0.0.0.0',
        configPath: '/app/config/relaygram.yaml',
        logLevel: 'info',
        redisUrl: 'redis://redis:6379',
        telegramApiBase: 'https://api.telegram.org',
      });
      // An empty ADMIN_TOKEN leaves the admin API off, as without the variable.
      expect(runtime.adminToken).toBeUndefined();
      // The shipped config, mounted at RELAYGRAM_CONFIG, with this environment.
      const loaded = loadConfig({ path: join(REPO, 'config', 'relaygram.yaml'), env: environment });
      expect(loaded.ok && loaded.config.redis.url).toBe('redis://redis:6379');
    }
    expect(compose.services.ingress.volumes).toEqual(['./config:/app/config:ro']);
  });
});
