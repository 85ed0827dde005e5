import { DELIVERY_LOG_MAX_AGE_MS } from '@relaygram/contracts';
import { IsOptional } from 'class-validator';
import { IsBool, IsDuration, IsIntInRange } from './field.decorators';

const MINUTE = 60_000;

/** Below 100 a busy route's log would hold less than a second; above a million it costs memory. */
export const DELIVERY_LOG_CAP_MIN = 100;
export const DELIVERY_LOG_CAP_MAX = 1_000_000;

export class DeliveryLogDto {
  @IsOptional()
  @IsBool()
  enabled?: boolean;

  @IsOptional()
  @IsIntInRange(DELIVERY_LOG_CAP_MIN, DELIVERY_LOG_CAP_MAX)
  attempts_per_route?: number;

  @IsOptional()
  @IsIntInRange(DELIVERY_LOG_CAP_MIN, DELIVERY_LOG_CAP_MAX)
  updates_per_bot?: number;

  @IsOptional()
  @IsDuration(MINUTE, DELIVERY_LOG_MAX_AGE_MS)
  max_age?: string | number;
}
