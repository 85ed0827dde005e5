import type { RelaygramConfig } from './config.types';

export interface LoadOptions {
  /** YAML file to read. */
  path: string;
  /** Where `*_env` keys and the REDIS_URL / TELEGRAM_API_BASE overrides are read; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Validate the file alone: leave env vars unresolved and unchecked (`config check --no-env`). */
  noEnv?: boolean;
}

export type LoadResult = { ok: true; config: RelaygramConfig } | { ok: false; problems: string[] };

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(_options: LoadOptions): LoadResult {
  throw new Error('loadConfig: not implemented yet');
}

export function loadConfigOrThrow(options: LoadOptions): RelaygramConfig {
  const result = loadConfig(options);
  if (!result.ok) throw new ConfigError(result.problems);
  return result.config;
}

/** Like loadConfig, and refuses a file that changes what needs a restart (redis). */
export function reloadConfig(current: RelaygramConfig, options: LoadOptions): LoadResult {
  const result = loadConfig(options);
  if (!result.ok) return result;
  const { redis } = result.config;
  if (redis.url !== current.redis.url || redis.prefix !== current.redis.prefix) {
    return {
      ok: false,
      problems: ['redis: a change of the Redis connection or prefix needs a restart'],
    };
  }
  return result;
}
