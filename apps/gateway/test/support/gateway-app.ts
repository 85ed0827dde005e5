import type { Writable } from 'node:stream';
import { startApp, type RunningApp } from '@relaygram/platform';
import { discardLogs, inProcessStart, uniquePrefix, writeConfigObject } from '@relaygram/testing';
import { GATEWAY_APP } from '../../src/app.module';

export interface GatewayApp {
  running: RunningApp;
  /** Stops the app and removes its config. */
  close(): Promise<void>;
}

/**
 * The gateway app as `npm run start:gateway` runs it, in this process: `config` (bots,
 * routes, clients...) on a key prefix of its own, `env` its secrets and overrides.
 */
export async function bootGateway(
  name: string,
  config: object,
  env: Record<string, string>,
  logs: Writable = discardLogs(),
): Promise<GatewayApp> {
  const file = writeConfigObject({
    redis: { url: 'redis://127.0.0.1:6379', prefix: uniquePrefix(name) },
    ...config,
  });
  try {
    const running = await startApp(GATEWAY_APP, inProcessStart(file.path, env, logs));
    return {
      running,
      async close() {
        await running.close();
        file.cleanup();
      },
    };
  } catch (error) {
    file.cleanup();
    throw error;
  }
}
