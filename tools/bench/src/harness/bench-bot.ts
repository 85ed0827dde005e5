import type { BenchContext } from './bench-context';
import { secret, type BotSpec } from './relaygram-install';

/** The id every section gives the emulator's bot in its Relaygram config. */
export const BENCH_BOT = 'bench-bot';

/** The emulator's bot as a section configures it, with a webhook secret of its own. */
export function benchBot(ctx: BenchContext, webhookSecret: string = secret()): BotSpec {
  return {
    id: BENCH_BOT,
    token: ctx.emulator.bot.token,
    username: ctx.emulator.bot.username,
    webhookSecret,
  };
}

/** The pids whose CPU a measurement counts: the processes under test, and Redis when it is ours to see. */
export function withRedisPid(ctx: BenchContext, pids: readonly number[]): number[] {
  return [...pids, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
}

/** The note of a Redis figure when the Redis is shared with other clients. */
export function sharedRedisNote(ctx: BenchContext): string | undefined {
  return ctx.redis.source === 'private redis-server'
    ? undefined
    : 'shared Redis: includes other clients';
}
