import { startApp, type RunningApp } from '@relaygram/platform';
import { createRedis, waitForRedis, type RelaygramRedis } from '@relaygram/queue';
import { request } from 'undici';
import {
  captureLogs,
  deleteKeys,
  expectDocumentedAnswer,
  inProcessStart,
} from '@relaygram/testing';
import { StandaloneAppModule } from '../src/app.module';

export {
  captureLogs,
  uniquePrefix,
  writeConfigObject as writeConfig,
  type CapturedLogs,
} from '@relaygram/testing';

export function bootStandalone(
  configPath: string,
  env: Record<string, string | undefined>,
  logs = captureLogs(),
): Promise<RunningApp> {
  return startApp(
    { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
    inProcessStart(configPath, { LOG_LEVEL: 'info', ...env }, logs.stream),
  );
}

/** Deletes every key of a test's prefix. */
export async function dropPrefix(prefix: string, url = process.env.REDIS_URL): Promise<void> {
  const redis: RelaygramRedis = createRedis(url ?? 'redis://127.0.0.1:6379', {
    connectionName: `test-cleanup-${prefix}`,
  });
  try {
    if (!(await waitForRedis(redis))) return;
    await deleteKeys(redis, `${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}

/** What a standalone test started; whichever part failed to start is left out. */
export interface StandaloneParts {
  app?: { close(): Promise<void> };
  receiver?: { stop(): Promise<void> };
  emulator?: { stop(): Promise<void> };
  prefix?: string;
  config?: { cleanup(): void };
}

/** Stops the app before what it talks to, then deletes its keys and its config. */
export async function stopStandalone(parts: StandaloneParts): Promise<void> {
  await parts.app?.close();
  await parts.receiver?.stop();
  await parts.emulator?.stop();
  if (parts.prefix !== undefined) await dropPrefix(parts.prefix);
  parts.config?.cleanup();
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, unknown> }> {
  const res = await request(url, { headers });
  const text = await res.body.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  const type = res.headers['content-type'];
  const contentType = typeof type === 'string' ? type : undefined;
  await expectDocumentedAnswer({ method: 'GET', url, status: res.statusCode, contentType, body });
  return { status: res.statusCode, body, headers: res.headers };
}

/** Samples of a Prometheus text exposition: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples of `name` whose labels include `labels`. */
export function metricValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
