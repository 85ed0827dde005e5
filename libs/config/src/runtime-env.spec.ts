import { configEnvironment, readRuntimeEnv } from './runtime-env';

describe('runtime overrides', () => {
  const env = { REDIS_URL: 'redis://10.0.0.5:6379', BOT_TOKEN: 'x' };

  it('leaves REDIS_URL as the environment gives it when nothing overrides it', () => {
    const runtime = readRuntimeEnv('standalone', env);
    expect(runtime.redisUrl).toBe('redis://10.0.0.5:6379');
    expect(configEnvironment(runtime, env)).toBe(env);
  });

  it('puts a Redis the process started in place of REDIS_URL, without writing to the environment', () => {
    const runtime = readRuntimeEnv('standalone', env, { redisUrl: 'redis://127.0.0.1:41234' });
    expect(runtime.redisUrl).toBe('redis://127.0.0.1:41234');
    expect(configEnvironment(runtime, env)).toEqual({
      REDIS_URL: 'redis://127.0.0.1:41234',
      BOT_TOKEN: 'x',
    });
    expect(env.REDIS_URL).toBe('redis://10.0.0.5:6379');
  });
});
