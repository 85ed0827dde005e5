import { redactToken } from './redact-token';

const TOKEN = '7123456789:AAHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF';

describe('redactToken', () => {
  it.each([
    [`POST /bot${TOKEN}/sendMessage`, 'POST /bot7123456789:***/sendMessage'],
    [`GET /file/bot${TOKEN}/photos/a.jpg`, 'GET /file/bot7123456789:***/photos/a.jpg'],
    [
      `https://api.telegram.org/bot${TOKEN.replace(':', '%3A')}/getMe`,
      'https://api.telegram.org/bot7123456789:***/getMe',
    ],
    [`token=${TOKEN}`, 'token=7123456789:***'],
    [`"${TOKEN}"`, '"7123456789:***"'],
    ['/bot123:short/getMe', '/bot123:***/getMe'],
    [`a ${TOKEN} b ${TOKEN}`, 'a 7123456789:*** b 7123456789:***'],
  ])('redacts %j', (text, expected) => {
    expect(redactToken(text)).toBe(expected);
  });

  it.each([
    'at 12:30:00 the job ran',
    'chat 123456789: hello',
    '/bot7123456789:***/getMe',
    'ratio 1:2, user 42:abcdef',
  ])('leaves %j as it is', (text) => {
    expect(redactToken(text)).toBe(text);
  });
});
