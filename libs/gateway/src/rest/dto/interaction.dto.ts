import { BotApiOptions, ChatId, NonEmptyText } from './field.decorators';

export class AnswerCallbackQueryDto {
  @NonEmptyText() callback_query_id!: string;
  @BotApiOptions('callback_query_id') options?: Record<string, unknown>;
}

export class SendChatActionDto {
  @ChatId() chat_id!: number | string;
  @NonEmptyText() action!: string;
}
