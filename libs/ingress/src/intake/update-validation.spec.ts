import { isUpdateId, parseUpdate, updateIdProblem } from './update-validation';

const body = (text: string) => Buffer.from(text, 'utf8');

describe('parseUpdate', () => {
  it('accepts an object with a non-negative safe integer update_id, of any update type', () => {
    expect(parseUpdate(body('{"update_id":0,"message":{"text":"hi"}}'))).toEqual({
      ok: true,
      update: { update_id: 0, message: { text: 'hi' } },
    });
    expect(parseUpdate(body('{"update_id":9007199254740991,"brand_new_type":{}}'))).toMatchObject({
      ok: true,
    });
    expect(parseUpdate(body(' \n{"update_id": 7}\n'))).toMatchObject({ ok: true });
  });

  it.each([
    ['', 'body is empty: expected a Telegram Update'],
    ['{', 'body is not JSON'],
    ['update_id=1', 'body is not JSON'],
    ['[]', 'body must be a JSON object (a Telegram Update)'],
    ['null', 'body must be a JSON object (a Telegram Update)'],
    ['42', 'body must be a JSON object (a Telegram Update)'],
    ['{}', 'update_id is missing'],
    ['{"update_id":"1"}', 'update_id must be a number, not string'],
    ['{"update_id":null}', 'update_id must be a number, not null'],
    ['{"update_id":true}', 'update_id must be a number, not boolean'],
    ['{"update_id":{"n":1}}', 'update_id must be a number, not object'],
    ['{"update_id":1.5}', 'update_id must be a non-negative integer below 2^53'],
    ['{"update_id":-1}', 'update_id must be a non-negative integer below 2^53'],
    ['{"update_id":9007199254740992}', 'update_id must be a non-negative integer below 2^53'],
    ['{"update_id":1e300}', 'update_id must be a non-negative integer below 2^53'],
  ])('refuses %s', (text, error) => {
    expect(parseUpdate(body(text))).toEqual({ ok: false, error });
  });
});

describe('isUpdateId', () => {
  it('holds for non-negative safe integers only', () => {
    expect([0, 1, 2 ** 53 - 1].every(isUpdateId)).toBe(true);
    expect([-1, 0.5, 2 ** 53, NaN, Infinity, '1', undefined].some(isUpdateId)).toBe(false);
    expect(updateIdProblem(12)).toBeUndefined();
  });
});
