import fc from 'fast-check';
import { BACKOFF_BASE_MS, backoffDelay, parseRetryAfter, retryDelay } from './backoff';

describe('backoffDelay', () => {
  it('has a ceiling of 1 s doubling per attempt, capped', () => {
    const top = () => 0.999999999;
    expect(backoffDelay(1, 300_000, top)).toBe(999);
    expect(backoffDelay(2, 300_000, top)).toBe(1_999);
    expect(backoffDelay(5, 300_000, top)).toBe(15_999);
    expect(backoffDelay(10, 300_000, top)).toBe(299_999);
    expect(backoffDelay(1_000, 300_000, top)).toBe(299_999);
    expect(backoffDelay(3, 1_000, top)).toBe(999);
  });

  it('jitters fully: anywhere from 0 to the ceiling', () => {
    expect(backoffDelay(4, 300_000, () => 0)).toBe(0);
    expect(backoffDelay(4, 300_000, () => 0.5)).toBe(4_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1_000, max: 86_400_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, cap, r) => {
          const delay = backoffDelay(attempt, cap, () => r);
          return (
            delay >= 0 &&
            delay < Math.min(cap, BACKOFF_BASE_MS * 2 ** (attempt - 1)) &&
            Number.isInteger(delay)
          );
        },
      ),
    );
  });
});

describe('retryDelay', () => {
  const half = () => 0.5;

  it('is the backoff without Retry-After', () => {
    expect(retryDelay(3, 300_000, undefined, half)).toBe(2_000);
  });

  it('honours Retry-After up to the cap, and never goes below the backoff', () => {
    expect(retryDelay(1, 300_000, 30_000, half)).toBe(30_000);
    expect(retryDelay(1, 10_000, 30_000, half)).toBe(10_000);
    expect(retryDelay(3, 300_000, 0, half)).toBe(2_000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(['5', '7'], now)).toBe(5_000);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, '', '-5', '1.5', 'soon', []]) {
      expect(parseRetryAfter(value as string | undefined, now)).toBeUndefined();
    }
  });
});
