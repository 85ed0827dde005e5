import {
  ConfigError,
  configEnvironment,
  loadConfigOrThrow,
  readRuntimeEnv,
  RuntimeEnvError,
  type RelaygramConfig,
  type RuntimeEnv,
  type RuntimeOverrides,
  type ServiceName,
} from '@relaygram/config';
import { RedisServerNotFoundError, redisChildIfNeeded, type LocalRedis } from '@relaygram/queue';
import { StartupError, type RunOptions } from './app-definition';

export interface BootSettings {
  env: RuntimeEnv;
  config: RelaygramConfig;
  /** The redis-server started for this process; stopped once the app has closed. */
  localRedis?: LocalRedis;
}

/**
 * The runtime env and the config, both validated before anything starts: a bad one
 * stops start-up with one line per problem. With `localRedis` and nothing answering at
 * the configured Redis, a redis-server is started and stands in for REDIS_URL.
 */
export async function readSettings(
  service: ServiceName,
  options: RunOptions,
): Promise<BootSettings> {
  let localRedis: LocalRedis | undefined;
  try {
    const settings = load(service, options.env);
    if (!options.localRedis) return settings;
    localRedis = await redisChildIfNeeded(
      { envUrl: settings.env.redisUrl, url: settings.config.redis.url },
      { dataDir: options.localRedis.dataDir, stopOnExit: true },
    );
    if (!localRedis) return settings;
    // Read again with the child as REDIS_URL: the override stays in the runtime env, so
    // a SIGHUP reload finds the same Redis.
    return { ...load(service, options.env, { redisUrl: localRedis.url }), localRedis };
  } catch (error) {
    await localRedis?.stop();
    if (error instanceof ConfigError || error instanceof RuntimeEnvError)
      throw new StartupError([...error.problems]);
    if (error instanceof RedisServerNotFoundError) throw new StartupError([error.message]);
    throw error;
  }
}

function load(
  service: ServiceName,
  vars: NodeJS.ProcessEnv | undefined,
  overrides?: RuntimeOverrides,
): BootSettings {
  const env = readRuntimeEnv(service, vars, overrides);
  const config = loadConfigOrThrow({ path: env.configPath, env: configEnvironment(env, vars) });
  return { env, config };
}
