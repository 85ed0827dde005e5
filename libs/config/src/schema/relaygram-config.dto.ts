import { IsOptional } from 'class-validator';
import { BotDto } from './bot.dto';
import { ClientDto } from './client.dto';
import { DeliveryLogDto } from './delivery-log.dto';
import { IsMapping, ListOf, Nested } from './field.decorators';
import { MAPPING_ITEM } from './list-item.rules';
import { RedisDto } from './redis.dto';
import { RouteDto } from './route.dto';
import { TelegramDto } from './telegram.dto';

/**
 * The YAML file as written: snake_case keys, so validation errors name YAML paths
 * directly. The loader turns it into the camelCase RelaygramConfig.
 */
export class RelaygramConfigDto {
  @IsOptional()
  @IsMapping()
  @Nested(() => RedisDto)
  redis?: RedisDto;

  @IsOptional()
  @IsMapping()
  @Nested(() => TelegramDto)
  telegram?: TelegramDto;

  @IsOptional()
  @ListOf(MAPPING_ITEM)
  @Nested(() => BotDto)
  bots?: BotDto[];

  @IsOptional()
  @ListOf(MAPPING_ITEM)
  @Nested(() => RouteDto)
  routes?: RouteDto[];

  @IsOptional()
  @ListOf(MAPPING_ITEM)
  @Nested(() => ClientDto)
  clients?: ClientDto[];

  @IsOptional()
  @IsMapping()
  @Nested(() => DeliveryLogDto)
  delivery_log?: DeliveryLogDto;
}
