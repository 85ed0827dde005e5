import { isPlainObject } from './dto/field.decorators';
import { AnswerCallbackQueryDto, SendChatActionDto } from './dto/interaction.dto';
import { SendDocumentDto, SendPhotoDto } from './dto/media.dto';
import {
  CopyMessageDto,
  DeleteMessageDto,
  EditMessageReplyMarkupDto,
  EditMessageTextDto,
  ForwardMessageDto,
  SendMessageDto,
} from './dto/message.dto';
import { compileValidator, type Validated } from './request-validator';

/** One row of SPEC section 6's table. */
export interface RestOperation {
  /** `messages/send`, under `/api/v1/` and `/api/v1/:botId/`. */
  readonly path: string;
  /** The Bot API method it calls; what `clients[].methods` is checked against. */
  readonly method: string;
  readonly validate: (input: unknown) => Validated<object>;
  /** The DTO `validate` checks against; the OpenAPI document reads its schema. */
  readonly dto: new () => object;
  /** The field a multipart upload's file part fills (`photo`, `document`). */
  readonly uploadField?: string;
  /** Form and multipart values are text: these become integers, these JSON. */
  readonly integerFields: readonly string[];
  readonly jsonFields: readonly string[];
}

function operation<T extends object>(
  path: string,
  method: string,
  dto: new () => T,
  extra: Partial<Pick<RestOperation, 'uploadField' | 'integerFields' | 'jsonFields'>> = {},
): RestOperation {
  return Object.freeze({
    path,
    method,
    validate: compileValidator(dto),
    dto,
    uploadField: extra.uploadField,
    integerFields: extra.integerFields ?? [],
    jsonFields: extra.jsonFields ?? ['options'],
  });
}

const WITH_MESSAGE_ID = { integerFields: ['message_id'] };

export const REST_OPERATIONS: readonly RestOperation[] = Object.freeze([
  operation('messages/send', 'sendMessage', SendMessageDto),
  operation('messages/edit', 'editMessageText', EditMessageTextDto, WITH_MESSAGE_ID),
  operation('messages/edit-markup', 'editMessageReplyMarkup', EditMessageReplyMarkupDto, {
    ...WITH_MESSAGE_ID,
    jsonFields: ['reply_markup'],
  }),
  operation('messages/delete', 'deleteMessage', DeleteMessageDto, WITH_MESSAGE_ID),
  operation('messages/forward', 'forwardMessage', ForwardMessageDto, WITH_MESSAGE_ID),
  operation('messages/copy', 'copyMessage', CopyMessageDto, WITH_MESSAGE_ID),
  operation('photos/send', 'sendPhoto', SendPhotoDto, { uploadField: 'photo' }),
  operation('documents/send', 'sendDocument', SendDocumentDto, { uploadField: 'document' }),
  operation('callbacks/answer', 'answerCallbackQuery', AnswerCallbackQueryDto),
  operation('chat-actions/send', 'sendChatAction', SendChatActionDto),
]);

/** A validated DTO as Bot API parameters: `options` merged under the named fields. */
export function toBotApiParams(dto: object): Record<string, unknown> {
  const { options, ...named } = dto as { options?: unknown } & Record<string, unknown>;
  const params: Record<string, unknown> = isPlainObject(options) ? { ...options } : {};
  for (const key of Object.keys(named)) {
    if (named[key] !== undefined) params[key] = named[key];
  }
  return params;
}

const INTEGER = /^-?\d{1,16}$/;

/**
 * Form and multipart fields arrive as text. Integer fields written as digits become
 * numbers and JSON fields are parsed; anything else is left for validation to name.
 */
export function fromFormFields(
  fields: Record<string, unknown>,
  op: Pick<RestOperation, 'integerFields' | 'jsonFields'>,
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...fields };
  for (const name of op.integerFields) {
    const value = input[name];
    if (typeof value === 'string' && INTEGER.test(value)) input[name] = Number(value);
  }
  for (const name of op.jsonFields) {
    const value = input[name];
    if (typeof value !== 'string') continue;
    try {
      input[name] = JSON.parse(value) as unknown;
    } catch {
      // Left as text: validation says the field must be a JSON object.
    }
  }
  return input;
}
