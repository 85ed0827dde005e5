import { Samples, percentile, percentileOfSorted, summarize } from './percentiles';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('gives the smallest value with p% of the samples at or below it', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 99.5)).toBe(100);
    expect(percentile([5, 1, 3], 50)).toBe(3);
    expect(percentile([1, 2], 50)).toBe(1);
    expect(percentile([1, 2, 3, 4], 75)).toBe(3);
  });

  it('gives the minimum at 0 and the maximum at 100', () => {
    expect(percentile([7, 3, 9], 0)).toBe(3);
    expect(percentile([7, 3, 9], 100)).toBe(9);
  });

  it('is undefined without samples and refuses a p outside 0..100', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentileOfSorted([1], 101)).toThrow(RangeError);
    expect(() => percentileOfSorted([1], Number.NaN)).toThrow(RangeError);
  });

  it('sees a slow tail only at p99 when it is 1% of the requests', () => {
    const values = [
      ...Array.from({ length: 990 }, () => 1),
      ...Array.from({ length: 10 }, () => 40),
    ];
    expect(summarize(values)).toMatchObject({ count: 1000, p50: 1, p90: 1, p99: 1, max: 40 });
    values.push(40);
    expect(summarize(values).p99).toBe(40);
  });
});

describe('Samples', () => {
  it('grows past its initial capacity and summarizes like the plain functions', () => {
    const samples = new Samples(2);
    const values = [9, 1, 5, 3, 7, 2.5];
    samples.addAll(values);
    expect(samples.count).toBe(6);
    expect(samples.summary()).toEqual(summarize(values));
    expect(samples.summary().mean).toBeCloseTo(27.5 / 6);
  });

  it('ignores values that are not finite', () => {
    const samples = new Samples();
    samples.addAll([1, Number.NaN, Number.POSITIVE_INFINITY, 2]);
    expect(samples.count).toBe(2);
  });

  it('re-sorts after values are added out of order following a percentile', () => {
    const samples = new Samples();
    samples.addAll([1, 2, 3]);
    expect(samples.percentile(100)).toBe(3);
    samples.add(0);
    expect(samples.percentile(0)).toBe(0);
    samples.clear();
    expect(samples.summary()).toEqual({ count: 0 });
  });
});
