import 'reflect-metadata';
import {
  fromFormFields,
  REST_OPERATIONS,
  toBotApiParams,
  type RestOperation,
} from './rest-operations';

function op(path: string): RestOperation {
  const found = REST_OPERATIONS.find((o) => o.path === path);
  if (!found) throw new Error(`no operation ${path}`);
  return found;
}

function problems(path: string, input: unknown): string[] {
  const result = op(path).validate(input);
  return result.ok ? [] : result.problems;
}

describe('REST operations', () => {
  it('map every row of the table to its Bot API method', () => {
    expect(Object.fromEntries(REST_OPERATIONS.map((o) => [o.path, o.method]))).toEqual({
      'messages/send': 'sendMessage',
      'messages/edit': 'editMessageText',
      'messages/edit-markup': 'editMessageReplyMarkup',
      'messages/delete': 'deleteMessage',
      'messages/forward': 'forwardMessage',
      'messages/copy': 'copyMessage',
      'photos/send': 'sendPhoto',
      'documents/send': 'sendDocument',
      'callbacks/answer': 'answerCallbackQuery',
      'chat-actions/send': 'sendChatAction',
    });
  });

  it('names a missing required field', () => {
    expect(problems('messages/send', { text: 'hi' })).toEqual(['chat_id is required']);
    expect(problems('messages/edit', { chat_id: 1, text: 'x' })).toEqual([
      'message_id is required',
    ]);
    expect(problems('callbacks/answer', {})).toEqual(['callback_query_id is required']);
    expect(problems('messages/forward', { chat_id: 1, message_id: 2 })).toEqual([
      'from_chat_id is required',
    ]);
  });

  it('names a field of the wrong type', () => {
    expect(problems('messages/send', { chat_id: 1.5, text: 'x' })).toEqual([
      'chat_id must be an integer or a string',
    ]);
    expect(problems('messages/send', { chat_id: true, text: 'x' })).toEqual([
      'chat_id must be an integer or a non-empty string',
    ]);
    expect(problems('messages/delete', { chat_id: 1, message_id: '2' })).toEqual([
      'message_id must be a positive integer',
    ]);
    expect(problems('messages/send', { chat_id: 1, text: '' })).toEqual([
      'text must be a non-empty string',
    ]);
    expect(
      problems('messages/edit-markup', { chat_id: 1, message_id: 2, reply_markup: [] }),
    ).toEqual(['reply_markup must be a JSON object']);
  });

  it('refuses fields that belong in options, and options that clash with fields', () => {
    expect(problems('messages/send', { chat_id: 1, text: 'x', parse_mode: 'HTML' })).toEqual([
      'parse_mode is not a field of this call (Bot API parameters go in options)',
    ]);
    expect(problems('messages/send', { chat_id: 1, text: 'x', options: { chat_id: 2 } })).toEqual([
      'options must not repeat the top-level field "chat_id"',
    ]);
    expect(
      problems('messages/send', { chat_id: 1, text: 'x', options: { method: 'getUpdates' } }),
    ).toEqual(['options must not contain "method"']);
    expect(
      problems('messages/send', { chat_id: 1, text: 'x', options: 'parse_mode=HTML' }),
    ).toEqual(['options must be a JSON object of Bot API parameters']);
    expect(problems('messages/send', { chat_id: 1, text: 'x', method: 'x' })).toEqual([
      'method is not a field of this call (Bot API parameters go in options)',
    ]);
  });

  it('refuses a body that is not an object, and a __proto__ key', () => {
    expect(problems('messages/send', [1])).toEqual(['the body must be a JSON object']);
    expect(
      problems('messages/send', JSON.parse('{"__proto__":{"x":1},"chat_id":1,"text":"x"}')),
    ).toEqual(['__proto__ is not a field']);
  });

  it('merges options under the named fields', () => {
    const result = op('messages/send').validate({
      chat_id: '@channel',
      text: 'hi',
      options: { parse_mode: 'HTML', reply_markup: { inline_keyboard: [] } },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(toBotApiParams(result.value)).toEqual({
      chat_id: '@channel',
      text: 'hi',
      parse_mode: 'HTML',
      reply_markup: { inline_keyboard: [] },
    });
  });

  it('reads form fields: digits for integer fields, JSON for options', () => {
    const input = fromFormFields(
      { chat_id: '-100123', message_id: '7', text: 'x', options: '{"parse_mode":"HTML"}' },
      op('messages/edit'),
    );
    expect(input).toEqual({
      chat_id: '-100123',
      message_id: 7,
      text: 'x',
      options: { parse_mode: 'HTML' },
    });
    expect(
      problems(
        'messages/edit',
        fromFormFields({ chat_id: '1', message_id: 'x', text: 'y' }, op('messages/edit')),
      ),
    ).toEqual(['message_id must be a positive integer']);
    expect(
      problems(
        'messages/send',
        fromFormFields({ chat_id: '1', text: 'y', options: '{' }, op('messages/send')),
      ),
    ).toEqual(['options must be a JSON object of Bot API parameters']);
  });
});
