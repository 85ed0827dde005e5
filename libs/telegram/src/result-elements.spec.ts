import fc from 'fast-check';
import { resultElementTexts } from './result-elements';

describe('resultElementTexts', () => {
  it('returns each element of result exactly as written', () => {
    const first =
      '{"update_id":1,"message":{"text":"caf\\u00e9 \\"quoted\\" \\\\ done","price":1.0,"big":12345678901234567890,"nested":[1,{"a":"]"}]}}';
    const second = '{ "update_id" : 2 , "message" : { "text" : "é ✓ 😀" } }';
    const text = `{"ok":true,"result":[ ${first} ,\n${second}]}`;
    expect(resultElementTexts(text)).toEqual([first, second]);
    // Parsing the slices gives what parsing the whole gives.
    expect(resultElementTexts(text)!.map((t) => JSON.parse(t))).toEqual(JSON.parse(text).result);
  });

  it('finds result after other keys, and an empty array', () => {
    expect(resultElementTexts('{"description":"x, [y]","ok":true,"result":[]}')).toEqual([]);
    expect(resultElementTexts('{"ok":true,"extra":{"result":[1]},"result":[7]}')).toEqual(['7']);
  });

  it('answers undefined for what is not an answer with a result array', () => {
    for (const text of ['', '[]', '{"ok":false}', '{"ok":true,"result":5}', '{"result":[1,', 'x']) {
      expect(resultElementTexts(text)).toBeUndefined();
    }
  });

  it('agrees with JSON.parse on any JSON array of values', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), (values) => {
        const text = JSON.stringify({ ok: true, result: values }, null, values.length % 2 ? 1 : 0);
        const slices = resultElementTexts(text);
        expect(slices?.map((slice) => JSON.parse(slice))).toEqual(JSON.parse(text).result);
      }),
      { numRuns: 300 },
    );
  });
});
