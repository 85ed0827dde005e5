import { checkBody, mayNameMethod, NO_PARAMS } from './drop-in-body';

const json = (text: string) => Buffer.from(text, 'utf8');

describe('mayNameMethod', () => {
  it.each([
    ['json', '{"method":"getUpdates"}'],
    ['json', '{"chat_id":1,"METHOD":"close"}'],
    ['json', '{"MeThOd":"x"}'],
    ['json', '{"\\u006dethod":"getUpdates"}'],
    ['json', '{"text":"a\\nb"}'],
    ['form', 'chat_id=1&method=getUpdates'],
    ['form', 'chat_id=1&m%65thod=getUpdates'],
    ['form', 'text=hello%20world'],
  ] as const)('a %s body that could name it: %s', (kind, text) => {
    expect(mayNameMethod(json(text), kind)).toBe(true);
  });

  it('a UTF-16 body, whose letters are not in a row', () => {
    expect(mayNameMethod(Buffer.from('{"method":"close"}', 'utf16le'), 'json')).toBe(true);
  });

  it.each([
    ['json', '{"chat_id":100000042,"text":"Your order has shipped"}'],
    ['json', '{"text":"Привет, метод"}'],
    ['json', '{"text":"metho"}'],
    ['json', '{"text":"ethod"}'],
    ['form', 'chat_id=1&text=hi+there'],
    ['json', ''],
  ] as const)('a %s body that cannot: %s', (kind, text) => {
    expect(mayNameMethod(json(text), kind)).toBe(false);
  });
});

describe('checkBody', () => {
  it('parses a body wanted for its parameters, and refuses a method in it', () => {
    expect(checkBody('json', json('{"chat_id":1}'), 'sendMessage')).toEqual({
      params: { chat_id: 1 },
    });
    expect(
      checkBody('json', json('{"method":"getUpdates"}'), 'sendMessage', false).refusal?.status,
    ).toBe(400);
    expect(checkBody('form', json('m%65thod=close'), 'sendMessage', false).refusal?.status).toBe(
      400,
    );
  });

  it('leaves a body unread that is not wanted and cannot name a method', () => {
    const checked = checkBody('json', json('{"chat_id":1,"text":"x"'), 'sendMessage', false);
    expect(checked.refusal).toBeUndefined();
    expect(checked.params).toBe(NO_PARAMS);
  });
});
