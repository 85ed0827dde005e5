import { printable } from './terminal-text';

describe('printable', () => {
  it('escapes C0, DEL, C1 and the line and paragraph separators, and nothing else', () => {
    expect(printable('a\u001b[2Jb\nc\u007f\u0085\u009bd\u2028\u2029')).toBe(
      'a\\u001b[2Jb\\u000ac\\u007f\\u0085\\u009bd\\u2028\\u2029',
    );
    expect(printable('shop-bot: «café» 🚀 \u00a0ok')).toBe('shop-bot: «café» 🚀 \u00a0ok');
  });
});
