import crypto, { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createSecretMatcher, matchSecret, safeEqual } from './secret-matcher';

describe('safeEqual', () => {
  it('is true for equal strings and equal buffers', () => {
    const value = randomBytes(24).toString('hex');
    expect(safeEqual(value, `${value}`)).toBe(true);
    expect(safeEqual(Buffer.from(value), Buffer.from(value))).toBe(true);
  });

  it('compares a string with a buffer by its UTF-8 bytes', () => {
    expect(safeEqual('pässword', Buffer.from('pässword', 'utf8'))).toBe(true);
    expect(safeEqual('pässword', Buffer.from('pässword', 'latin1'))).toBe(false);
  });

  it('is false for values of different lengths, without throwing', () => {
    expect(safeEqual('token', 'token-and-more')).toBe(false);
    expect(safeEqual('token-and-more', 'token')).toBe(false);
    expect(safeEqual('', 'x')).toBe(false);
  });

  it('treats two empty values as equal (matchers, not safeEqual, refuse empties)', () => {
    expect(safeEqual('', Buffer.alloc(0))).toBe(true);
  });

  it('agrees with byte equality for arbitrary inputs', () => {
    fc.assert(
      fc.property(fc.uint8Array(), fc.uint8Array(), (a, b) => {
        const left = Buffer.from(a);
        const right = Buffer.from(b);
        expect(safeEqual(left, right)).toBe(left.equals(right));
        expect(safeEqual(left, Buffer.from(left))).toBe(true);
      }),
    );
  });
});

describe('matchSecret', () => {
  const secrets = ['first-secret', 'second-secret', 'third-secret'];

  it('returns the index of the matching secret, first and last included', () => {
    expect(matchSecret('first-secret', secrets)).toBe(0);
    expect(matchSecret('second-secret', secrets)).toBe(1);
    expect(matchSecret('third-secret', secrets)).toBe(2);
  });

  it('returns -1 when nothing matches, including prefixes and extensions', () => {
    expect(matchSecret('other', secrets)).toBe(-1);
    expect(matchSecret('first-secre', secrets)).toBe(-1);
    expect(matchSecret('first-secret ', secrets)).toBe(-1);
  });

  it('returns -1 with no configured secrets', () => {
    expect(matchSecret('first-secret', [])).toBe(-1);
  });

  it('never matches a missing or empty candidate, nor an empty configured secret', () => {
    expect(matchSecret(undefined, secrets)).toBe(-1);
    expect(matchSecret('', ['', 'x'])).toBe(-1);
    expect(matchSecret(Buffer.alloc(0), [Buffer.alloc(0)])).toBe(-1);
    expect(matchSecret('x', ['', 'x'])).toBe(1);
  });

  it('matches buffers against strings by bytes', () => {
    expect(matchSecret(Buffer.from('second-secret'), secrets)).toBe(1);
    expect(matchSecret('third-secret', [Buffer.from('a'), Buffer.from('third-secret')])).toBe(1);
  });

  it('reports the first of duplicate secrets', () => {
    expect(matchSecret('dup', ['a', 'dup', 'dup'])).toBe(1);
  });

  describe('compares against every secret, without early exit', () => {
    let spy: jest.SpyInstance;
    beforeEach(() => {
      spy = jest.spyOn(crypto, 'timingSafeEqual');
    });
    afterEach(() => spy.mockRestore());

    it.each([
      ['a match at the first index', 'first-secret'],
      ['a match at the last index', 'third-secret'],
      ['no match', 'nothing'],
    ])('with %s', (_case, candidate) => {
      matchSecret(candidate, secrets);
      expect(spy).toHaveBeenCalledTimes(secrets.length);
      for (const [a, b] of spy.mock.calls as [Buffer, Buffer][]) {
        expect(a).toHaveLength(32);
        expect(b).toHaveLength(32);
      }
    });
  });
});

describe('createSecretMatcher', () => {
  it('matches like matchSecret, call after call', () => {
    const tokens = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
    const match = createSecretMatcher(tokens);
    expect(match(tokens[1])).toBe(1);
    expect(match(tokens[0])).toBe(0);
    expect(match(tokens[0].toUpperCase())).toBe(-1);
    expect(match(undefined)).toBe(-1);
  });

  it('does not see later changes to the array it was built from', () => {
    const tokens = ['one', 'two'];
    const match = createSecretMatcher(tokens);
    tokens[0] = 'three';
    expect(match('one')).toBe(0);
    expect(match('three')).toBe(-1);
  });

  it('agrees with a plain indexOf on arbitrary non-empty inputs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 6 }),
        fc.string({ minLength: 1, maxLength: 8 }),
        (secrets, candidate) => {
          expect(createSecretMatcher(secrets)(candidate)).toBe(secrets.indexOf(candidate));
        },
      ),
    );
  });
});
