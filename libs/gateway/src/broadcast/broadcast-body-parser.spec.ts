import {
  BodySyntaxError,
  BroadcastBodyParser,
  type BodyEvent,
  type BodyParserOptions,
} from './broadcast-body-parser';

const OPTIONS: BodyParserOptions = {
  listField: 'chat_ids',
  fields: ['method', 'params'],
  maxValueBytes: 1024,
};

/** Every event of a body fed as these chunks, `end()` included. */
function parse(chunks: readonly Buffer[], options = OPTIONS): BodyEvent[] {
  const parser = new BroadcastBodyParser(options);
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return [...events, ...parser.end()];
}

const whole = (text: string, options = OPTIONS) => parse([Buffer.from(text)], options);

function failure(text: string, options = OPTIONS): BodySyntaxError {
  try {
    whole(text, options);
  } catch (error) {
    if (error instanceof BodySyntaxError) return error;
    throw error;
  }
  throw new Error(`parsed without an error: ${text}`);
}

/** Every way to cut a body in two, and one byte at a time: the events never change. */
function expectSameAtEverySplit(text: string): BodyEvent[] {
  const bytes = Buffer.from(text);
  const expected = parse([bytes]);
  for (let cut = 0; cut <= bytes.length; cut++) {
    expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected);
  }
  const single = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  expect(parse(single)).toEqual(expected);
  return expected;
}

const item = (value: string | number, index: number, offset: number): BodyEvent => ({
  type: 'item',
  value,
  index,
  offset,
});

describe('BroadcastBodyParser', () => {
  it('emits the list items in order and the other values as their JSON text', () => {
    const body = '{"method":"sendMessage","params":{"text":"hi"},"chat_ids":[1,"-100","@news"]}';
    expect(whole(body)).toEqual([
      { type: 'field', field: 'method', text: '"sendMessage"', offset: 10 },
      { type: 'field', field: 'params', text: '{"text":"hi"}', offset: 33 },
      item(1, 0, 59),
      item('-100', 1, 61),
      item('@news', 2, 68),
    ]);
  });

  it('takes the fields in any order, the list first too', () => {
    const events = whole('{"chat_ids":[7,8],"params":{},"method":"copyMessage"}');
    expect(events.map((e) => (e.type === 'item' ? e.value : e.field))).toEqual([
      7,
      8,
      'params',
      'method',
    ]);
  });

  it('gives the same events wherever the body is cut: strings, escapes, nesting, UTF-8', () => {
    const body =
      '\ufeff {\n  "chat_ids" : [ 123456789 , "-1001234567890",\t"@shop_news", -42, "\\u0031\\u0032" ] ,\r\n' +
      '  "params": {"text": "Ünïcödé ✓ \\"quoted\\" {not} [a list] \\\\", "reply_markup": ' +
      '{"inline_keyboard": [[{"text": "🛒", "callback_data": "order:1,2"}]]}, "n": [1, -2.5e3, null, true]},\n' +
      '  "method" : "sendMessage"\n} \n';
    const events = expectSameAtEverySplit(body);
    expect(events.filter((e) => e.type === 'item').map((e) => e.value)).toEqual([
      123456789,
      '-1001234567890',
      '@shop_news',
      -42,
      '12',
    ]);
    const fields = Object.fromEntries(
      events.flatMap((e) => (e.type === 'field' ? [[e.field, JSON.parse(e.text)]] : [])),
    );
    expect(fields).toEqual({
      method: 'sendMessage',
      params: {
        text: 'Ünïcödé ✓ "quoted" {not} [a list] \\',
        reply_markup: { inline_keyboard: [[{ text: '🛒', callback_data: 'order:1,2' }]] },
        n: [1, -2500, null, true],
      },
    });
  });

  it('reads scalar values up to their delimiter, at every cut', () => {
    const events = expectSameAtEverySplit('{"method":1234 ,"params":null,"chat_ids":[]}');
    expect(events).toEqual([
      { type: 'field', field: 'method', text: '1234', offset: 10 },
      { type: 'field', field: 'params', text: 'null', offset: 25 },
    ]);
  });

  it('accepts an empty object and an empty list: what is missing is the caller to say', () => {
    expect(whole(' {} ')).toEqual([]);
    expect(whole('{"chat_ids":[ ]}')).toEqual([]);
  });

  it('counts byte offsets over multi-byte characters', () => {
    const events = whole('{"params":{"t":"é"},"chat_ids":[5]}');
    // "é" is two bytes: the item is one byte further than its character index.
    expect(events[1]).toEqual(item(5, 0, 33));
  });

  it('reads a long list fed in many chunks, keeping no more than one item', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => (i % 2 ? -1_000_000_000_000 - i : `${i}`));
    const bytes = Buffer.from(JSON.stringify({ method: 'sendMessage', chat_ids: ids }));
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 997) chunks.push(bytes.subarray(at, at + 997));
    const values = parse(chunks).flatMap((e) => (e.type === 'item' ? [e.value] : []));
    expect(values).toEqual(ids);
  });

  it.each<[string, string, string, number]>([
    ['an empty body', '', 'the body is empty: it must be a JSON object', 0],
    ['only spaces', '  \n', 'the body is empty: it must be a JSON object', 3],
    ['a list', '[1,2]', "the body must be a JSON object: expected '{', found '[' (at byte 0)", 0],
    [
      'an unquoted name',
      '{method: 1}',
      "expected a field name in quotes, found 'm' (at byte 1)",
      1,
    ],
    [
      'a trailing comma in the object',
      '{"method":"x",}',
      "expected a field name in quotes, found '}' (at byte 14)",
      14,
    ],
    [
      'an unknown field',
      '{"method":"x","priority":1}',
      'unknown field "priority": the body\'s fields are chat_ids, method, params (at byte 14)',
      14,
    ],
    [
      'a field twice',
      '{"chat_ids":[1],"chat_ids":[2]}',
      '"chat_ids" appears twice (at byte 16)',
      16,
    ],
    [
      'a missing colon',
      '{"method" "x"}',
      "expected ':' after \"method\", found '\"' (at byte 10)",
      10,
    ],
    [
      'a missing value',
      '{"method":}',
      'expected the value of "method", found \'}\' (at byte 10)',
      10,
    ],
    [
      'an unquoted value',
      '{"method":sendMessage}',
      'expected the value of "method", found \'s\' (at byte 10)',
      10,
    ],
    [
      'a list that is no list',
      '{"chat_ids":"1,2"}',
      '"chat_ids" must be a JSON array, found \'"\' (at byte 12)',
      12,
    ],
    [
      'an object in the list',
      '{"chat_ids":[1,{"id":2}]}',
      "chat_ids[1] must be a number or a string, found '{' (at byte 15)",
      15,
    ],
    [
      'null in the list',
      '{"chat_ids":[null]}',
      "chat_ids[0] must be a number or a string, found 'n' (at byte 13)",
      13,
    ],
    [
      'a trailing comma in the list',
      '{"chat_ids":[1,]}',
      "chat_ids[1] must be a number or a string, found ']' (at byte 15)",
      15,
    ],
    [
      'two items without a comma',
      '{"chat_ids":[1 2]}',
      "expected ',' or ']' after chat_ids[0], found '2' (at byte 15)",
      15,
    ],
    [
      'a number with a leading zero',
      '{"chat_ids":[1,012]}',
      'chat_ids[1] is not a JSON number: 012 (at byte 15)',
      15,
    ],
    ['a minus alone', '{"chat_ids":[-]}', 'chat_ids[0] is not a JSON number: - (at byte 13)', 13],
    [
      'a control character in a string',
      '{"chat_ids":["a\nb"]}',
      'a control character in a string: escape it (at byte 15)',
      15,
    ],
    ['a bad escape', '{"chat_ids":["\\x41"]}', 'an invalid escape in a string (at byte 13)', 13],
    [
      'a missing comma between fields',
      '{"method":"x" "params":{}}',
      "expected ',' or '}' after the value of \"method\", found '\"' (at byte 14)",
      14,
    ],
    [
      'something after the object',
      '{"method":"x"} x',
      "unexpected 'x' after the body's JSON object (at byte 15)",
      15,
    ],
    [
      'an unclosed object',
      '{"method":"x"',
      'the body ends at byte 13, before its JSON object does',
      13,
    ],
    [
      'an unclosed list',
      '{"chat_ids":[1,2',
      'the body ends at byte 16, before its JSON object does',
      16,
    ],
    [
      'an unclosed value',
      '{"params":{"a":[1,2}',
      'the body ends at byte 20, before its JSON object does',
      20,
    ],
  ])('refuses %s, saying where', (_name, body, message, offset) => {
    const error = failure(body);
    expect(error.message).toBe(message);
    expect(error.offset).toBe(offset);
  });

  it('bounds every value but the list', () => {
    const small = { ...OPTIONS, maxValueBytes: 16 };
    expect(whole('{"params":{"t":"01234567"}}', small)).toHaveLength(1);
    const text = failure('{"method":"x","params":{"t":"012345678"}}', small);
    expect(text.message).toBe('the value of "params" is larger than 16 bytes (at byte 23)');
    // Cut into chunks, the bound holds before the value ends.
    const parser = new BroadcastBodyParser(small);
    parser.push(Buffer.from('{"params":"'));
    expect(() => parser.push(Buffer.from('x'.repeat(40)))).toThrow(
      'the value of "params" is larger than 16 bytes (at byte 10)',
    );
    expect(failure('{"method":12345678901234567890}', small).message).toBe(
      'the value of "method" is larger than 16 bytes (at byte 10)',
    );
  });

  it('bounds list items and field names', () => {
    const long = `"@${'a'.repeat(300)}"`;
    expect(failure(`{"chat_ids":[1,${long}]}`).message).toBe(
      'chat_ids[1] is longer than 256 bytes (at byte 15)',
    );
    expect(failure(`{"chat_ids":[${'1'.repeat(300)}]}`).message).toBe(
      'chat_ids[0] is longer than 256 bytes (at byte 13)',
    );
    expect(failure(`{"${'k'.repeat(300)}":1}`).message).toBe(
      'a field name is longer than 256 bytes (at byte 1)',
    );
  });

  it('skips a UTF-8 byte order mark, and refuses a broken one', () => {
    expect(parse([Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x7b, 0x7d])])).toEqual([]);
    const parser = new BroadcastBodyParser(OPTIONS);
    expect(() => parser.push(Buffer.from([0xef, 0x7b]))).toThrow(
      "the body is not UTF-8 JSON: unexpected '{' (at byte 1)",
    );
  });

  it('reports its offset: the bytes read so far', () => {
    const parser = new BroadcastBodyParser(OPTIONS);
    parser.push(Buffer.from('{"chat_ids":'));
    expect(parser.offset).toBe(12);
    expect(parser.push(Buffer.from('[1,2'))).toEqual([item(1, 0, 13)]);
    expect(parser.push(Buffer.from(']}'))).toEqual([item(2, 1, 15)]);
    expect(parser.end()).toEqual([]);
  });
});
