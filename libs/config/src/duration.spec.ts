import { formatDuration, parseDuration } from './duration';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
    ['500ms', 500],
    ['0ms', 0],
    ['0s', 0],
    ['90', 90_000],
    [45, 45_000],
    [0, 0],
  ])('reads %p as %p ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    ['1.5s'],
    ['-5s'],
    ['5 m'],
    ['5M'],
    ['5w'],
    ['5MS'],
    ['1.5ms'],
    ['s'],
    [''],
    [' 30s'],
    ['1 day'],
    [-1],
    [1.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [null],
    [undefined],
    [true],
    [['30s']],
    [{ seconds: 30 }],
  ])('refuses %p', (input) => {
    expect(parseDuration(input)).toBeUndefined();
  });

  it('refuses values too large to count in exact milliseconds', () => {
    const days = Math.ceil(Number.MAX_SAFE_INTEGER / 86_400_000) + 1;
    expect(parseDuration(`${days}d`)).toBeUndefined();
    expect(parseDuration(Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(parseDuration(`${days - 2}d`)).toBe((days - 2) * 86_400_000);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [1_000, '1s'],
    [90_000, '90s'],
    [300_000, '5m'],
    [86_400_000, '1d'],
    [2_592_000_000, '30d'],
    [1_500, '1500ms'],
  ])('writes %p ms as %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
