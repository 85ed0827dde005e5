import {
  BotApiOptions,
  ChatId,
  NonEmptyText,
  OptionalObject,
  PositiveInteger,
} from './field.decorators';

export class SendMessageDto {
  @ChatId() chat_id!: number | string;
  @NonEmptyText() text!: string;
  @BotApiOptions('chat_id', 'text') options?: Record<string, unknown>;
}

export class EditMessageTextDto {
  @ChatId() chat_id!: number | string;
  @PositiveInteger() message_id!: number;
  @NonEmptyText() text!: string;
  @BotApiOptions('chat_id', 'message_id', 'text') options?: Record<string, unknown>;
}

export class EditMessageReplyMarkupDto {
  @ChatId() chat_id!: number | string;
  @PositiveInteger() message_id!: number;
  /** Absent: the message's inline keyboard is removed, as with Telegram. */
  @OptionalObject() reply_markup?: Record<string, unknown>;
}

export class DeleteMessageDto {
  @ChatId() chat_id!: number | string;
  @PositiveInteger() message_id!: number;
}

export class ForwardMessageDto {
  @ChatId() chat_id!: number | string;
  @ChatId() from_chat_id!: number | string;
  @PositiveInteger() message_id!: number;
  @BotApiOptions('chat_id', 'from_chat_id', 'message_id') options?: Record<string, unknown>;
}

/** copyMessage takes the same fields as forwardMessage. */
export class CopyMessageDto extends ForwardMessageDto {}
