import Ajv2020 from 'ajv/dist/2020';
import { IsString } from 'class-validator';
import { compileValidator } from '../request-validator';
import { dtoSchema } from './dto-schema';
import { AnswerCallbackQueryDto, SendChatActionDto } from './interaction.dto';
import { SendPhotoDto } from './media.dto';
import {
  CopyMessageDto,
  DeleteMessageDto,
  EditMessageReplyMarkupDto,
  EditMessageTextDto,
  SendMessageDto,
} from './message.dto';

const ajv = new Ajv2020({ strict: false });

describe('dtoSchema', () => {
  it('reads the fields, required ones and their schemas from the class-validator metadata', () => {
    expect(dtoSchema(SendMessageDto)).toMatchObject({
      type: 'object',
      required: ['chat_id', 'text'],
      additionalProperties: false,
      properties: {
        chat_id: { oneOf: [{ type: 'integer' }, { type: 'string', minLength: 1 }] },
        text: { type: 'string', minLength: 1 },
        options: { type: 'object' },
      },
    });
    expect(Object.keys(dtoSchema(EditMessageReplyMarkupDto).properties as object)).toEqual([
      'chat_id',
      'message_id',
      'reply_markup',
    ]);
  });

  it('includes the fields a DTO inherits', () => {
    expect(dtoSchema(CopyMessageDto).required).toEqual(['chat_id', 'from_chat_id', 'message_id']);
  });

  // The schema and the validator are two readings of one decorator: they must agree.
  const cases: [new () => object, unknown][] = [
    [SendMessageDto, { chat_id: 1, text: 'hi' }],
    [SendMessageDto, { chat_id: '@channel', text: 'hi', options: { parse_mode: 'HTML' } }],
    [SendMessageDto, { chat_id: 1 }],
    [SendMessageDto, { chat_id: 1.5, text: 'hi' }],
    [SendMessageDto, { chat_id: '', text: 'hi' }],
    [SendMessageDto, { chat_id: 1, text: '' }],
    [SendMessageDto, { chat_id: 1, text: 'hi', parse_mode: 'HTML' }],
    [SendMessageDto, { chat_id: 1, text: 'hi', options: { text: 'again' } }],
    [SendMessageDto, { chat_id: 1, text: 'hi', options: { Method: 'getMe' } }],
    [SendMessageDto, { chat_id: 1, text: 'hi', options: [] }],
    [EditMessageTextDto, { chat_id: 1, message_id: 2, text: 'x' }],
    [EditMessageTextDto, { chat_id: 1, message_id: 0, text: 'x' }],
    [EditMessageReplyMarkupDto, { chat_id: 1, message_id: 2 }],
    [EditMessageReplyMarkupDto, { chat_id: 1, message_id: 2, reply_markup: 'none' }],
    [DeleteMessageDto, { chat_id: 1, message_id: '2' }],
    [CopyMessageDto, { chat_id: 1, from_chat_id: 2, message_id: 3 }],
    [SendPhotoDto, { chat_id: 1, photo: 'file-id' }],
    [AnswerCallbackQueryDto, { callback_query_id: 'q' }],
    [SendChatActionDto, { chat_id: 1 }],
  ];

  it.each(cases.map(([dto, input]) => [dto.name, dto, input] as const))(
    '%s: the schema accepts %j exactly when validation does',
    (_name, dto, input) => {
      const validated = compileValidator(dto)(input).ok;
      expect(ajv.validate(dtoSchema(dto), input)).toBe(validated);
    },
  );

  it('refuses a field whose decorator gives no schema, rather than document it as anything', () => {
    class Undocumented {
      @IsString() name!: string;
    }
    expect(() => dtoSchema(Undocumented)).toThrow(
      'Undocumented.name: its decorator gives no schema',
    );
  });
});
