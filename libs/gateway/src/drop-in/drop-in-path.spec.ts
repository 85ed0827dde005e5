import { bodyKind } from './body-kind';
import { loggedPath, parseDropInPath } from './drop-in-path';

describe('parseDropInPath', () => {
  it.each([
    [
      '123:tok/sendMessage',
      'method',
      { kind: 'method', numericId: '123', token: 'tok', method: 'sendMessage' },
    ],
    [
      '123:tok/test/sendMessage',
      'method',
      { kind: 'test-environment', numericId: '123', token: 'tok' },
    ],
    ['123:tok/TEST/getMe', 'method', { kind: 'test-environment', numericId: '123', token: 'tok' }],
    ['123:tok/test', 'method', { kind: 'test-environment', numericId: '123', token: 'tok' }],
    ['123:tok/', 'method', { kind: 'not-found', numericId: '123', token: 'tok' }],
    ['123:tok', 'method', { kind: 'not-found', numericId: '123', token: 'tok' }],
    ['123:tok/a/b', 'method', { kind: 'not-found', numericId: '123', token: 'tok' }],
    [
      '123:tok/send-message',
      'method',
      { kind: 'method', numericId: '123', token: 'tok', method: 'send-message' },
    ],
    ['abc:tok/getMe', 'method', { kind: 'malformed' }],
    ['123/getMe', 'method', { kind: 'malformed' }],
    [':tok/getMe', 'method', { kind: 'malformed' }],
    [
      '123:tok/photos/file_1.jpg',
      'file',
      { kind: 'file', numericId: '123', token: 'tok', filePath: 'photos/file_1.jpg' },
    ],
    ['123:tok/', 'file', { kind: 'not-found', numericId: '123', token: 'tok' }],
  ] as const)('%s (%s)', (rest, route, target) => {
    expect(parseDropInPath(rest, route)).toEqual(target);
  });

  it('logs the path with the token masked', () => {
    expect(loggedPath('123', 'sendMessage')).toBe('/bot123:***/sendMessage');
  });
});

describe('bodyKind', () => {
  it.each([
    [undefined, { kind: 'opaque' }],
    ['application/json', { kind: 'json' }],
    ['Application/JSON; charset=utf-8', { kind: 'json' }],
    // Telegram's server finds the media type anywhere in the header: so must we.
    ['text/plain; x=application/json', { kind: 'json' }],
    ['application/x-www-form-urlencoded', { kind: 'form' }],
    ['multipart/form-data; boundary=abc', { kind: 'multipart', boundary: 'abc' }],
    ['multipart/form-data; boundary="a b c"', { kind: 'multipart', boundary: 'a b c' }],
    ['multipart/form-data', { kind: 'ambiguous' }],
    ['multipart/form-data; boundary=x; y=application/json', { kind: 'ambiguous' }],
    ['text/plain', { kind: 'opaque' }],
    ['application/octet-stream', { kind: 'opaque' }],
  ])('%s', (contentType, kind) => {
    expect(bodyKind(contentType)).toEqual(kind);
  });
});
