import { IsOptional, ValidateIf } from 'class-validator';
import { BOT_MODES, type BotMode } from '../config.types';
import { isMapping, USERNAME } from './config-rules';
import {
  CheckedBy,
  IsBool,
  IsEnvName,
  IsHttpUrl,
  IsIntInRange,
  IsName,
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
}
