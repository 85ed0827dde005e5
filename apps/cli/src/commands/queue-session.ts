import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  defaultConfigPath,
  deliveryLogOf,
  loadConfig,
  type RelaygramConfig,
} from '@relaygram/config';
import { errorMessage } from '@relaygram/contracts';
import {
  DeliveryLogSettings,
  createRedis,
  queueContext,
  waitForRedis,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';

/** The options of every command that reads or writes the install's Redis. */
export interface StoreOptions {
  config?: string;
  /** False with --no-env. */
  env: boolean;
  redisUrl?: string;
}

/** Thrown for a mistake of the caller: printed as one line, exit code 1. */
export class UsageError extends Error {}

export function withStoreOptions(command: Command): Command {
  return command
    .option(
      '-c, --config <file>',
      'config file (default: $RELAYGRAM_CONFIG or config/relaygram.yaml)',
    )
    .option('--redis-url <url>', 'Redis to use instead of the config one (and REDIS_URL)')
    .option(
      '--no-env',
      'read the config file alone: no secrets needed, REDIS_URL not applied (use --redis-url)',
    );
}

/** Gets the queue and the loaded config; answers the exit code. */
export type QueueAction = (ctx: QueueContext, config: RelaygramConfig) => Promise<number>;

/**
 * Loads the config, connects, runs the action, and always disconnects. A UsageError or
 * RangeError (a bad cursor) is printed as `relaygram <name>: <message>`, exit code 1.
 */
export async function withQueue(
  name: string,
  options: StoreOptions,
  action: QueueAction,
): Promise<void> {
  const path = resolve(options.config ?? defaultConfigPath());
  const loaded = loadConfig({ path, noEnv: !options.env });
  if (!loaded.ok) {
    process.stderr.write(`invalid: ${path}\n${loaded.problems.join('\n')}\n`);
    process.exitCode = 1;
    return;
  }
  const config = loaded.config;
  const url = options.redisUrl ?? config.redis.url;
  let redis: RelaygramRedis | undefined;
  try {
    try {
      redis = createRedis(url, { connectionName: 'relaygram-cli', mode: 'request' });
    } catch (error) {
      throw new UsageError(errorMessage(error), { cause: error });
    }
    redis.on('error', () => undefined);
    if (!(await waitForRedis(redis, 3_000))) {
      throw new UsageError(`cannot reach Redis at ${hostOf(url)}`);
    }
    // The config's delivery_log: what a script records under, how far back the log reads.
    const log = new DeliveryLogSettings(deliveryLogOf(config));
    process.exitCode = await action(queueContext(redis, config.redis.prefix, log), config);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof RangeError)) throw error;
    process.stderr.write(`relaygram ${name}: ${error.message}\n`);
    process.exitCode = 1;
  } finally {
    const client = redis;
    await client?.quit().catch(() => client.disconnect());
  }
}

/** host:port of a Redis URL, never its password. */
function hostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'the configured URL';
  }
}
