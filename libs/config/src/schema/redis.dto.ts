import { IsOptional } from 'class-validator';
import { REDIS_PREFIX } from './config-rules';
import { IsRedisUrl, MatchesRule } from './field.decorators';

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
}
