import { resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { assembleConfig } from './config-assembler';
import type { RelaygramConfig } from './config.types';
import { deepFreeze } from './deep-freeze';
import { EnvSecrets } from './env-secrets';
import { ProblemList, type Finding } from './problem-list';
import { isMapping } from './schema/config-rules';
import { toPlainData } from './schema/plain-data';
import { RelaygramConfigDto } from './schema/relaygram-config.dto';
import { reportValidationProblems } from './schema/validation-problems';
import { readYamlFile } from './yaml-source';

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

export const DEFAULT_CONFIG_PATH = 'config/relaygram.yaml';

/** The config file to use: RELAYGRAM_CONFIG, else config/relaygram.yaml (relative to the cwd). */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.RELAYGRAM_CONFIG || DEFAULT_CONFIG_PATH;
}

/**
 * Reads, validates and resolves a config file. Every problem comes back at once, one
 * line each naming its YAML path (or `file:line:column` for YAML syntax); no line ever
 * holds a secret value. The config returned is deeply frozen.
 */
export function loadConfig(options: LoadOptions): LoadResult {
  const source = resolve(options.path);
  const yaml = readYamlFile(options.path);
  if (!yaml.ok) return { ok: false, problems: yaml.problems };
  const findings: Finding[] = [];
  const data = toPlainData(yaml.data ?? {}, findings);
  if (!isMapping(data)) {
    return {
      ok: false,
      problems: [
        `${options.path}: must be a mapping with the keys redis, telegram, bots, routes, clients and delivery_log`,
      ],
    };
  }
  const problems = new ProblemList(yaml.locate);
  const warnings = new ProblemList(yaml.locate);
  for (const finding of findings) problems.add(finding.path, finding.message);
  const dto = plainToInstance(RelaygramConfigDto, data);
  reportValidationProblems(dto, problems);
  const env = options.env ?? process.env;
  const secrets = new EnvSecrets(env, options.noEnv === true, problems);
  const assembled = assembleConfig(dto, { env, secrets, problems, warnings });
  if (problems.size) return { ok: false, problems: problems.lines() };
  const config: RelaygramConfig = { ...assembled, warnings: warnings.lines(), source };
  return { ok: true, config: deepFreeze(config) };
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
