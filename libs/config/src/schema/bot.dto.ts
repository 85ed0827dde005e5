import { IsOptional, ValidateIf } from 'class-validator';
import { BOT_MODES, type BotMode } from '../config.types';
import { isMapping, USERNAME } from './config-rules';
import {
  CheckedBy,
  IsBool,
  IsDuration,
  IsEnvName,
  IsHttpUrl,
  IsIntInRange,
  IsMapping,
  IsName,
  IsNumberInRange,
  IsOneOf,
  ListOf,
  MatchesRule,
  Nested,
  Required,
} from './field.decorators';
import { UPDATE_TYPE_ITEM } from './list-item.rules';

export class WebhookDto {
  @Required()
  @IsHttpUrl()
  url!: string;

  @Required()
  @IsEnvName()
  secret_token_env!: string;

  @IsOptional()
  @IsIntInRange(1, 100)
  max_connections?: number;

  @IsOptional()
  @IsBool()
  manage?: boolean;

  /** How often getWebhookInfo is read to find drift and delivery errors (with `manage`). */
  @IsOptional()
  @IsDuration(1_000, 24 * 3600_000)
  check_every?: string | number;
}

/** `bots[].outbound`: the bot's send budgets (SPEC section 9); every key has a default. */
export class OutboundDto {
  @IsOptional()
  @IsBool()
  enabled?: boolean;

  @IsOptional()
  @IsNumberInRange(0, 100_000, { above: true })
  per_second?: number;

  // The ceilings are far above Telegram's limits, so a Bot API server without them (or
  // a benchmark) can be given room.
  @IsOptional()
  @IsNumberInRange(0, 100_000, { above: true })
  per_chat_per_second?: number;

  @IsOptional()
  @IsIntInRange(1, 100_000)
  chat_burst?: number;

  @IsOptional()
  @IsIntInRange(1, 100_000)
  per_group_per_minute?: number;

  @IsOptional()
  @IsDuration(0, 60_000)
  max_wait?: string | number;

  @IsOptional()
  @IsNumberInRange(0, 1)
  broadcast_share?: number;
}

export class BotDto {
  @Required()
  @IsName()
  id!: string;

  @Required()
  @IsEnvName()
  token_env!: string;

  @IsOptional()
  @MatchesRule(USERNAME, 'must be a Telegram username: 5-32 letters, digits or _, without @')
  username?: string;

  @Required()
  @IsOneOf(BOT_MODES)
  mode!: BotMode;

  @IsOptional()
  @ListOf(UPDATE_TYPE_ITEM, { emptyMessage: 'must list at least one update type' })
  allowed_updates?: string[];

  @IsOptional()
  @IsBool()
  default?: boolean;

  // Checked for webhook bots (required) and for polling bots that carry one (an error);
  // with a missing or unknown mode only `mode` is reported.
  @ValidateIf(
    (bot: BotDto) =>
      bot.mode === 'webhook' ||
      (bot.mode === 'polling' && bot.webhook !== undefined && bot.webhook !== null),
  )
  @Required('required when mode is webhook')
  @CheckedBy('webhookBlock', (value, bot) => {
    if ((bot as BotDto).mode !== 'webhook') return 'only allowed when mode is webhook';
    return isMapping(value) ? undefined : 'must be a mapping';
  })
  @Nested(() => WebhookDto)
  webhook?: WebhookDto;

  @IsOptional()
  @IsMapping()
  @Nested(() => OutboundDto)
  outbound?: OutboundDto;
}
