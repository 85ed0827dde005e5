/**
 * The forms `redis.url` (and REDIS_URL) may take. One string is enough for every
 * topology, so an env var alone can point any deployment at its Redis:
 *
 *   redis://[[user]:password@]host[:port][/db]               one server (rediss:// for TLS)
 *   redis+cluster://[[user]:password@]host[:port],host[:port]...   Redis Cluster seed nodes
 *   redis+sentinel://[[user]:password@]host[:port],...]/<master>[/db]   Sentinels, master name
 *
 * `rediss+cluster://` and `rediss+sentinel://` use TLS (for Sentinel: to the Sentinels
 * and to the servers they name). The user and password are those of the Redis servers;
 * Sentinels that require their own take `?sentinel_username=&sentinel_password=`.
 */

export interface RedisHostPort {
  readonly host: string;
  readonly port: number;
}

interface Credentials {
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

export interface StandaloneRedisEndpoint extends Credentials {
  readonly kind: 'standalone';
  /** The URL as given: ioredis parses this form itself. */
  readonly url: string;
}

export interface ClusterRedisEndpoint extends Credentials {
  readonly kind: 'cluster';
  readonly nodes: readonly RedisHostPort[];
}

export interface SentinelRedisEndpoint extends Credentials {
  readonly kind: 'sentinel';
  readonly sentinels: readonly RedisHostPort[];
  /** The master group name, as in Sentinel's `monitor` line. */
  readonly name: string;
  readonly db: number;
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

export type RedisEndpoint = StandaloneRedisEndpoint | ClusterRedisEndpoint | SentinelRedisEndpoint;

export const REDIS_URL_RULE =
  'must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL';

const DEFAULT_PORT = 6379;
const DEFAULT_SENTINEL_PORT = 26379;
const SENTINEL_PARAMS = new Set(['sentinel_username', 'sentinel_password']);

export class RedisUrlError extends Error {
  constructor(readonly problem: string) {
    // Never the value: the URL may carry a password.
    super(`redis.url: ${problem}`);
    this.name = 'RedisUrlError';
  }
}

/** Parses a Redis URL of any supported form; the problem never repeats the value. */
export function parseRedisUrl(value: unknown): RedisEndpoint | { problem: string } {
  if (typeof value !== 'string' || /\s/.test(value)) return { problem: REDIS_URL_RULE };
  const scheme = /^(rediss?)(\+cluster|\+sentinel)?:\/\//i.exec(value);
  if (!scheme) return { problem: REDIS_URL_RULE };
  const tls = scheme[1].toLowerCase() === 'rediss';
  const topology = scheme[2]?.toLowerCase();
  if (!topology) return standalone(value, tls);

  // WHATWG URL takes one host only: read the host list apart, then parse the rest.
  const rest = value.slice(scheme[0].length);
  const at = rest.lastIndexOf('@', firstIndexOf(rest, ['/', '?', '#']));
  const userinfo = at >= 0 ? rest.slice(0, at) : '';
  const afterUser = rest.slice(at + 1);
  const hostsEnd = firstIndexOf(afterUser, ['/', '?', '#']);
  const hostList = afterUser.slice(0, hostsEnd);
  let tail: URL;
  try {
    tail = new URL(
      `redis://${userinfo ? `${userinfo}@` : ''}placeholder${afterUser.slice(hostsEnd)}`,
    );
  } catch {
    return { problem: REDIS_URL_RULE };
  }
  if (tail.hash) return { problem: `${REDIS_URL_RULE}; a # fragment has no meaning here` };
  const defaultPort = topology === '+sentinel' ? DEFAULT_SENTINEL_PORT : DEFAULT_PORT;
  const hosts = hostPorts(hostList, defaultPort);
  if ('problem' in hosts) return hosts;
  const credentials = {
    tls,
    ...(tail.username ? { username: decodeURIComponent(tail.username) } : {}),
    ...(tail.password ? { password: decodeURIComponent(tail.password) } : {}),
  };

  if (topology === '+cluster') {
    if (tail.pathname !== '' && tail.pathname !== '/') {
      return { problem: `${REDIS_URL_RULE}; a Redis Cluster has no databases, so no path` };
    }
    if (tail.search) return { problem: `${REDIS_URL_RULE}; redis+cluster:// takes no parameters` };
    return { kind: 'cluster', nodes: hosts.list, ...credentials };
  }

  const path = /^\/([A-Za-z0-9._-]{1,128})(?:\/(\d{1,2}))?\/?$/.exec(tail.pathname);
  if (!path) {
    return {
      problem: `${REDIS_URL_RULE}; redis+sentinel:// needs the master name as its path, like /mymaster or /mymaster/0`,
    };
  }
  for (const key of tail.searchParams.keys()) {
    if (!SENTINEL_PARAMS.has(key)) {
      return {
        problem: `${REDIS_URL_RULE}; redis+sentinel:// takes only sentinel_username and sentinel_password parameters`,
      };
    }
  }
  const sentinelUsername = tail.searchParams.get('sentinel_username') || undefined;
  const sentinelPassword = tail.searchParams.get('sentinel_password') || undefined;
  return {
    kind: 'sentinel',
    sentinels: hosts.list,
    name: path[1],
    db: path[2] === undefined ? 0 : Number(path[2]),
    ...credentials,
    ...(sentinelUsername ? { sentinelUsername } : {}),
    ...(sentinelPassword ? { sentinelPassword } : {}),
  };
}

/** The problem with a Redis URL (phrased to follow `<path>: `), or undefined. */
export function redisUrlProblem(value: unknown): string | undefined {
  const parsed = parseRedisUrl(value);
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** Like parseRedisUrl, throwing a RedisUrlError (which names no value) instead. */
export function redisEndpoint(value: string): RedisEndpoint {
  const parsed = parseRedisUrl(value);
  if ('problem' in parsed) throw new RedisUrlError(parsed.problem);
  return parsed;
}

function standalone(value: string, tls: boolean): StandaloneRedisEndpoint | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: REDIS_URL_RULE };
  }
  if (!url.hostname) return { problem: REDIS_URL_RULE };
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname)) {
    return { problem: `${REDIS_URL_RULE}; the path may only be a database number, like /0` };
  }
  return {
    kind: 'standalone',
    url: value,
    tls,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  };
}

function hostPorts(
  list: string,
  defaultPort: number,
): { list: RedisHostPort[] } | { problem: string } {
  const result: RedisHostPort[] = [];
  for (const item of list.split(',')) {
    let url: URL;
    try {
      url = new URL(`redis://${item}`);
    } catch {
      return { problem: `${REDIS_URL_RULE}; list hosts as host:port,host:port` };
    }
    const plain = url.pathname === '' && !url.search && !url.hash && !url.username;
    if (!item || !url.hostname || !plain) {
      return { problem: `${REDIS_URL_RULE}; list hosts as host:port,host:port` };
    }
    // WHATWG keeps IPv6 brackets; net.connect wants the bare address.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    result.push({ host, port: url.port ? Number(url.port) : defaultPort });
  }
  return { list: result };
}

function firstIndexOf(text: string, needles: readonly string[]): number {
  let first = text.length;
  for (const needle of needles) {
    const index = text.indexOf(needle);
    if (index >= 0 && index < first) first = index;
  }
  return first;
}
