import { BotApiOptions, ChatId, NonEmptyText } from './field.decorators';

/** `photo`: a file_id or an HTTP URL in JSON, or the file itself as a multipart part. */
export class SendPhotoDto {
  @ChatId() chat_id!: number | string;
  @NonEmptyText() photo!: string;
  @BotApiOptions('chat_id', 'photo') options?: Record<string, unknown>;
}

/** `document`: a file_id or an HTTP URL in JSON, or the file itself as a multipart part. */
export class SendDocumentDto {
  @ChatId() chat_id!: number | string;
  @NonEmptyText() document!: string;
  @BotApiOptions('chat_id', 'document') options?: Record<string, unknown>;
}
