import { errorMessage } from './error-message';

describe('errorMessage', () => {
  it('reads an Error by its message', () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input');
  });

  it('reads a thrown string as itself and other values through String()', () => {
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });

  it('survives a value whose String() throws', () => {
    const hostile = {
      toString: () => {
        throw new Error('no');
      },
    };
    expect(errorMessage(hostile)).toBe('unknown error');
  });
});
