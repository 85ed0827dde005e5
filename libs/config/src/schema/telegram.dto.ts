import { IsOptional } from 'class-validator';
import { IsHttpUrl } from './field.decorators';

export class TelegramDto {
  @IsOptional()
  @IsHttpUrl()
  api_base?: string;
}
