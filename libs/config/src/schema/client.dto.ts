import { IsOptional } from 'class-validator';
import { IsBool, IsEnvName, IsName, ListOf, Required } from './field.decorators';
import { METHOD_ITEM, NAME_ITEM } from './list-item.rules';

export class ClientDto {
  @Required()
  @IsName()
  name!: string;

  @Required()
  @IsEnvName()
  token_env!: string;

  @Required()
  @ListOf(NAME_ITEM, { emptyMessage: 'must list at least one bot' })
  bots!: string[];

  @IsOptional()
  @ListOf(METHOD_ITEM, {
    emptyMessage:
      'must list at least one method; leave the key out to allow all but the reserved ones',
  })
  methods?: string[];

  /** May start broadcasts (`POST /api/v1/:botId/broadcasts`); `methods` still applies. */
  @IsOptional()
  @IsBool()
  broadcast?: boolean;
}
