import { IsOptional, ValidateIf } from 'class-validator';
import { DELIVERY_FORMATS, ORDERINGS, SIGNATURE_SCHEMES } from '../config.types';
import type { DeliveryFormat, Ordering, SignatureScheme } from '../config.types';
import {
  IsBool,
  IsDuration,
  IsEnvName,
  IsHttpUrl,
  IsIntInRange,
  IsMapping,
  IsName,
  IsOneOf,
  ListOf,
  Nested,
  Required,
} from './field.decorators';
import {
  COMMAND_ITEM,
  ID_ITEM,
  NAME_ITEM,
  NON_EMPTY_STRING_ITEM,
  UPDATE_TYPE_ITEM,
} from './list-item.rules';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// An empty list would match nothing, so removing the last id would silently change a
// route's meaning; the key has to go instead.
const MATCH_EMPTY = { emptyMessage: 'must not be empty; leave the key out to match every value' };

export class RouteMatchDto {
  @IsOptional()
  @ListOf(UPDATE_TYPE_ITEM, MATCH_EMPTY)
  update_types?: string[];

  @IsOptional()
  @ListOf(ID_ITEM, MATCH_EMPTY)
  user_ids?: number[];

  @IsOptional()
  @ListOf(ID_ITEM, MATCH_EMPTY)
  chat_ids?: number[];

  @IsOptional()
  @ListOf(COMMAND_ITEM, MATCH_EMPTY)
  commands?: string[];

  @IsOptional()
  @ListOf(NON_EMPTY_STRING_ITEM, MATCH_EMPTY)
  callback_prefixes?: string[];
}

export class RetryDto {
  @IsOptional()
  @IsDuration(SECOND, 30 * DAY)
  max_age?: string | number;

  @IsOptional()
  @IsDuration(SECOND, DAY)
  backoff_cap?: string | number;

  @IsOptional()
  @IsIntInRange(1, 1000)
  max_consecutive_5xx?: number;
}

/** `pull:` of a pull route: the client whose drop-in getUpdates takes its updates. */
export class PullDto {
  @Required()
  @IsName()
  client!: string;
}

export class RouteDto {
  @Required()
  @IsName()
  name!: string;

  @IsOptional()
  @ListOf(NAME_ITEM, {
    emptyMessage: 'must list at least one bot; leave the key out for every bot',
  })
  bots?: string[];

  // Absent on a pull route; the assembler reports a route with both or neither.
  @ValidateIf((route: RouteDto) => route.pull === undefined)
  @Required('required, or pull: { client: <client name> } for a pull route')
  @IsHttpUrl('use service_token_env')
  target_url!: string;

  @IsOptional()
  @IsMapping()
  @Nested(() => PullDto)
  pull?: PullDto;

  @IsOptional()
  @IsMapping()
  @Nested(() => RouteMatchDto)
  match?: RouteMatchDto;

  @IsOptional()
  @IsOneOf(DELIVERY_FORMATS)
  format?: DeliveryFormat;

  @IsOptional()
  @IsOneOf(ORDERINGS)
  ordering?: Ordering;

  @IsOptional()
  @IsIntInRange(1, 1000)
  concurrency?: number;

  @IsOptional()
  @IsDuration(SECOND, 5 * MINUTE)
  timeout?: string | number;

  @IsOptional()
  @IsEnvName()
  signing_secret_env?: string;

  @IsOptional()
  @IsOneOf(SIGNATURE_SCHEMES)
  signature?: SignatureScheme;

  @IsOptional()
  @IsEnvName()
  service_token_env?: string;

  @IsOptional()
  @IsEnvName()
  telegram_secret_token_env?: string;

  @IsOptional()
  @IsBool()
  webhook_reply?: boolean;

  @IsOptional()
  @IsMapping()
  @Nested(() => RetryDto)
  retry?: RetryDto;
}
