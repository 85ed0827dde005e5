import { IsOptional } from 'class-validator';
import { REDIS_PREFIX } from './config-rules';
import { IsDuration, IsIntInRange, IsRedisUrl, MatchesRule } from './field.decorators';

/**
 * A WAIT holds the connection that serves webhooks, whose commands time out after 1 s:
 * the wait must end well before that.
 */
export const REDIS_WAIT_TIMEOUT_MAX_MS = 800;
export const REDIS_WAIT_REPLICAS_MAX = 5;

export class RedisDto {
  @IsOptional()
  @IsRedisUrl()
  url?: string;

  @IsOptional()
  @MatchesRule(
    REDIS_PREFIX,
    'must be 1-64 letters, digits, _, . or -, optionally in braces as a Redis Cluster hash tag like {relaygram}',
  )
  prefix?: string;

  @IsOptional()
  @IsIntInRange(0, REDIS_WAIT_REPLICAS_MAX)
  wait_replicas?: number;

  @IsOptional()
  @IsDuration(10, REDIS_WAIT_TIMEOUT_MAX_MS)
  wait_timeout?: string | number;
}
