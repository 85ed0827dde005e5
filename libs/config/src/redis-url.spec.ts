import { REDIS_URL_RULE, parseRedisUrl, redisEndpoint, redisUrlProblem } from './redis-url';

describe('parseRedisUrl', () => {
  it('keeps a redis:// or rediss:// URL whole, for ioredis to read', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({
      kind: 'standalone',
      url: 'redis://127.0.0.1:6379',
      tls: false,
    });
    expect(parseRedisUrl('rediss://app:s3cret@cache.internal:6380/2')).toEqual({
      kind: 'standalone',
      url: 'rediss://app:s3cret@cache.internal:6380/2',
      tls: true,
      username: 'app',
      password: 's3cret',
    });
  });

  it('reads the seed nodes of a cluster, with default ports and credentials', () => {
    expect(parseRedisUrl('redis+cluster://:p%40ss@10.0.0.1:7000,10.0.0.2,[::1]:7002/')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      tls: false,
      password: 'p@ss',
    });
    expect(parseRedisUrl('rediss+cluster://redis-0.redis:6379')).toMatchObject({
      kind: 'cluster',
      tls: true,
    });
  });

  it('reads the Sentinels, the master name, the database and Sentinel credentials', () => {
    expect(
      parseRedisUrl(
        'redis+sentinel://app:pw@s1:26380,s2/mymaster/3?sentinel_username=sen&sentinel_password=spw',
      ),
    ).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      db: 3,
      tls: false,
      username: 'app',
      password: 'pw',
      sentinelUsername: 'sen',
      sentinelPassword: 'spw',
    });
    expect(parseRedisUrl('REDIS+SENTINEL://s1/main')).toMatchObject({ name: 'main', db: 0 });
  });

  it.each([
    ['another scheme', 'http://127.0.0.1:6379', REDIS_URL_RULE],
    ['no scheme', 'localhost:6379', REDIS_URL_RULE],
    ['spaces', 'redis://127.0.0.1:6379 ', REDIS_URL_RULE],
    ['not a string', 6379, REDIS_URL_RULE],
    [
      'a path that is no db',
      'redis://h:1/x',
      `${REDIS_URL_RULE}; the path may only be a database number, like /0`,
    ],
    [
      'an empty host in a list',
      'redis+cluster://a:1,,b:2',
      `${REDIS_URL_RULE}; list hosts as host:port,host:port`,
    ],
    [
      'a bad port',
      'redis+cluster://a:99999',
      `${REDIS_URL_RULE}; list hosts as host:port,host:port`,
    ],
    ['no host at all', 'redis+cluster://', `${REDIS_URL_RULE}; list hosts as host:port,host:port`],
    [
      'a cluster db',
      'redis+cluster://a:1/0',
      `${REDIS_URL_RULE}; a Redis Cluster has no databases, so no path`,
    ],
    [
      'cluster parameters',
      'redis+cluster://a:1?x=1',
      `${REDIS_URL_RULE}; redis+cluster:// takes no parameters`,
    ],
    ['a fragment', 'redis+cluster://a:1#x', `${REDIS_URL_RULE}; a # fragment has no meaning here`],
    [
      'no master name',
      'redis+sentinel://a:26379',
      `${REDIS_URL_RULE}; redis+sentinel:// needs the master name as its path, like /mymaster or /mymaster/0`,
    ],
    [
      'unknown Sentinel parameters',
      'redis+sentinel://a/m?password=x',
      `${REDIS_URL_RULE}; redis+sentinel:// takes only sentinel_username and sentinel_password parameters`,
    ],
  ])('refuses %s', (_case, value, problem) => {
    expect(redisUrlProblem(value)).toBe(problem);
  });

  it('never repeats the value (it may hold a password) in its error', () => {
    const url = 'redis+sentinel://user:hunter2@s1:26379';
    expect(() => redisEndpoint(url)).toThrow(/^redis\.url: /);
    try {
      redisEndpoint(url);
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
      expect(String(error)).not.toContain('s1');
    }
  });
});
