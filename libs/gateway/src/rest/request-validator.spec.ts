import 'reflect-metadata';
import fc from 'fast-check';
import { fuzzParameters } from '@relaygram/testing';
import { compileValidator } from './request-validator';
import { REST_OPERATIONS } from './rest-operations';

const value = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 3 }),
  fc.constantFrom('', '@chan', null, true, 2 ** 60),
  fc.dictionary(fc.constantFrom('parse_mode', 'method', 'chat_id', 'text', 'x'), fc.string()),
  fc.array(fc.integer(), { maxLength: 2 }),
);
const FIELDS = [
  'chat_id',
  'text',
  'options',
  'message_id',
  'from_chat_id',
  'reply_markup',
  'photo',
  'document',
  'callback_query_id',
  'action',
  'parse_mode',
];

describe('compileValidator', () => {
  it.each(REST_OPERATIONS.map((op) => [op.path, op] as const))(
    '%s: the precompiled rules decide every body as class-validator does',
    (_path, op) => {
      const precompiled = compileValidator(op.dto);
      const classValidator = compileValidator(op.dto, { precompiled: false });
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...FIELDS), value), (body) => {
          expect(precompiled(body)).toEqual(classValidator(body));
        }),
        fuzzParameters(300),
      );
    },
  );

  it('answers a valid body without class-validator, with the same value', () => {
    const op = REST_OPERATIONS.find((o) => o.path === 'messages/send');
    const validate = compileValidator(op!.dto);
    const result = validate({ chat_id: 1, text: 'hi', options: { parse_mode: 'HTML' } });
    expect(result).toEqual({
      ok: true,
      value: expect.objectContaining({ chat_id: 1, text: 'hi', options: { parse_mode: 'HTML' } }),
    });
    expect(validate({ chat_id: 1, text: '', extra: 1 })).toEqual({
      ok: false,
      problems: expect.arrayContaining([expect.stringMatching(/^extra is not a field/)]),
    });
  });
});
