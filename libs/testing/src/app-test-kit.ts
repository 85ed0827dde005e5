import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { writeTestConfig, type TestConfigFile } from './test-config-file';

/** A Redis key prefix of its own for one test, so tests never see each other's keys. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomUUID().slice(0, 8)}`;
}

export interface CapturedLogs {
  /** The app's log destination. */
  stream: Writable;
  /** Every line written so far, as written (JSON text). */
  lines: string[];
}

/** A log destination that keeps every line, for tests that read what an app logged. */
export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** A log destination that drops everything, for tests that do not read the logs. */
export function discardLogs(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

/**
 * The environment of an app a test starts in-process: ephemeral ports on both
 * listeners, the test's Redis (REDIS_URL, else the default) and config, LOG_LEVEL warn;
 * `extra` adds to it or overrides it.
 */
export function testAppEnv(
  configPath: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    PORT: '0',
    ADMIN_PORT: '0',
    REDIS_URL: process.env.REDIS_URL,
    RELAYGRAM_CONFIG: configPath,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** A log line of an app, parsed from its JSON. */
export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/**
 * A log destination that parses each line into `lines`, with `fields` added to each (to
 * tell apart several apps writing to one list); a line that is not JSON is kept as
 * `{ level: 'raw', msg }`.
 */
export function parsedLogs(
  lines: LogLine[] = [],
  fields: Record<string, unknown> = {},
): { stream: Writable; lines: LogLine[] } {
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (!line.trim()) continue;
        try {
          lines.push({ ...(JSON.parse(line) as LogLine), ...fields });
        } catch {
          lines.push({ level: 'raw', msg: line, ...fields });
        }
      }
      done();
    },
  });
  return { stream, lines };
}

/**
 * `startApp` options for an app a test starts in its own process: `testAppEnv` plus `env`,
 * no signal handlers (the test runner owns them), logs to `logDestination`.
 */
export function inProcessStart(
  configPath: string,
  env: Record<string, string | undefined>,
  logDestination: Writable,
): { env: Record<string, string | undefined>; signals: false; logDestination: Writable } {
  return { env: testAppEnv(configPath, env), signals: false, logDestination };
}

/** What an app test needs of a started app (`RunningApp` of @relaygram/platform). */
export interface StartedApp {
  url: string;
  adminUrl: string;
  close(): Promise<void>;
}

/** How to start an app in-process: `startApp` options without the signal handling. */
export interface AppStartOptions {
  env: Record<string, string | undefined>;
  logDestination: Writable;
}

/**
 * The boot test every app has: started on ephemeral ports with an empty config (no
 * bots), it answers the liveness probe on both listeners and keeps management paths
 * off the public one. `start` wires the app's module to `startApp`, which this library
 * cannot import.
 */
export function describeAppBoot(
  service: string,
  start: (options: AppStartOptions) => Promise<StartedApp>,
): void {
  describe(`${service} app`, () => {
    let running: StartedApp;
    let config: TestConfigFile;

    beforeAll(async () => {
      config = writeTestConfig();
      running = await start({ env: testAppEnv(config.path), logDestination: discardLogs() });
    });
    afterAll(async () => {
      await running?.close();
      config.remove();
    });

    it('answers the liveness probe on the public and the management listener', async () => {
      for (const base of [running.url, running.adminUrl]) {
        const res = await request(`${base}/health/live`);
        expect(res.statusCode).toBe(200);
        expect(await res.body.json()).toMatchObject({ status: 'ok' });
      }
    });

    it('keeps management paths off the public port', async () => {
      const res = await request(`${running.url}/metrics`);
      expect(res.statusCode).toBe(404);
      await res.body.dump();
    });
  });
}
