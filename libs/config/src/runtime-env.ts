import type { ServiceName } from '@relaygram/contracts';
import { parseFaultInjection, type FaultInjection } from './fault-injection';
import { Secret } from './secret';

export type { ServiceName };

/** Public port of each app when PORT is not set (SPEC section 1). */
export const DEFAULT_PORTS: Readonly<Record<ServiceName, number>> = Object.freeze({
  ingress: 3000,
  gateway: 3001,
  dispatcher: 3002,
  standalone: 3000,
});

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Process settings that come from the environment rather than the YAML file. */
export interface RuntimeEnv {
  readonly configPath: string;
  readonly port: number;
  readonly host: string;
  readonly adminPort: number;
  readonly adminHost: string;
  readonly adminToken?: Secret;
  readonly logLevel: LogLevel;
  readonly redisUrl?: string;
  readonly telegramApiBase?: string;
  /** RELAYGRAM_FAULTS: fault injection for the chaos suite; empty in production. */
  readonly faults: FaultInjection;
  readonly overrides: RuntimeOverrides;
}

/**
 * Settings a process decides for itself in place of a variable of its environment. The
 * environment stays as it was given; config reads see the override through configEnvironment.
 */
export interface RuntimeOverrides {
  /**
   * The Redis the process started itself (the standalone's local redis-server): it is
   * REDIS_URL for the start-up read of the config and for every SIGHUP reload after it.
   */
  readonly redisUrl?: string;
}

export class RuntimeEnvError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'RuntimeEnvError';
  }
}

function port(name: string, raw: string | undefined, fallback: number, problems: string[]): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    problems.push(`${name}: must be a port number from 0 to 65535`);
    return fallback;
  }
  return value;
}

export function readRuntimeEnv(
  service: ServiceName,
  env: NodeJS.ProcessEnv = process.env,
  overrides: RuntimeOverrides = {},
): RuntimeEnv {
  const problems: string[] = [];
  const portValue = port('PORT', env.PORT, DEFAULT_PORTS[service], problems);
  const adminPort = port(
    'ADMIN_PORT',
    env.ADMIN_PORT,
    portValue === 0 ? 0 : portValue + 100,
    problems,
  );
  if (adminPort !== 0 && adminPort === portValue) {
    problems.push('ADMIN_PORT: must differ from PORT (the management listener is a separate port)');
  }
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const faults = parseFaultInjection(env.RELAYGRAM_FAULTS, problems);
  if (problems.length) throw new RuntimeEnvError(problems);
  return Object.freeze({
    configPath: env.RELAYGRAM_CONFIG || 'config/relaygram.yaml',
    port: portValue,
    host: env.HOST || '0.0.0.0',
    adminPort,
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminToken: env.ADMIN_TOKEN ? new Secret(env.ADMIN_TOKEN) : undefined,
    logLevel: logLevel as LogLevel,
    redisUrl: overrides.redisUrl ?? (env.REDIS_URL || undefined),
    telegramApiBase: env.TELEGRAM_API_BASE || undefined,
    faults,
    overrides: Object.freeze({ ...overrides }),
  });
}

/**
 * The environment a config file is read with (its `*_env` secrets, the REDIS_URL and
 * TELEGRAM_API_BASE overrides): `env` as it is now, with the runtime's overrides in place.
 */
export function configEnvironment(
  runtime: RuntimeEnv,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const { redisUrl } = runtime.overrides;
  return redisUrl === undefined ? env : { ...env, REDIS_URL: redisUrl };
}
