import { describeTarget, judge, ratio } from './targets';

describe('ratio', () => {
  it('divides the measurement by its baseline', () => {
    expect(ratio(7500, 10000)).toBe(0.75);
  });

  it('is undefined without a usable baseline', () => {
    expect(ratio(1, 0)).toBeUndefined();
    expect(ratio(1, undefined)).toBeUndefined();
    expect(ratio(undefined, 1)).toBeUndefined();
    expect(ratio(1, Number.NaN)).toBeUndefined();
  });
});

describe('judge', () => {
  it('passes a throughput ratio at or above its minimum', () => {
    const target = { kind: 'ratio-at-least', min: 0.75 } as const;
    expect(judge(target, 7500, 10000)).toEqual({ verdict: 'PASS', ratio: 0.75 });
    expect(judge(target, 7499, 10000).verdict).toBe('MISS');
  });

  it('passes a latency ratio at or below its maximum', () => {
    const target = { kind: 'ratio-at-most', max: 2 } as const;
    expect(judge(target, 8, 4).verdict).toBe('PASS');
    expect(judge(target, 8.1, 4).verdict).toBe('MISS');
  });

  it('judges absolute limits without a baseline', () => {
    expect(judge({ kind: 'at-most', max: 150, unit: 'MB' }, 150).verdict).toBe('PASS');
    expect(judge({ kind: 'at-most', max: 150, unit: 'MB' }, 151).verdict).toBe('MISS');
    expect(judge({ kind: 'at-least', min: 4000, unit: '/s' }, 3999).verdict).toBe('MISS');
    expect(judge({ kind: 'at-least', min: 4000, unit: '/s' }, 4000).verdict).toBe('PASS');
  });

  it('judges an added cost as the difference to the baseline', () => {
    const target = { kind: 'added-at-most', max: 1, unit: 'ms' } as const;
    expect(judge(target, 1.9, 1).verdict).toBe('PASS');
    expect(judge(target, 2.1, 1).verdict).toBe('MISS');
    expect(judge(target, 2, undefined)).toEqual({
      verdict: 'MISS',
      reason: 'no baseline to compare with',
    });
  });

  it('never passes what was not measured', () => {
    expect(judge({ kind: 'ratio-at-least', min: 0.7 }, undefined, 100)).toMatchObject({
      verdict: 'MISS',
      reason: 'not measured',
    });
    expect(judge({ kind: 'ratio-at-least', min: 0.7 }, 100, 0)).toMatchObject({
      verdict: 'MISS',
      reason: 'no baseline to compare with',
    });
  });

  it('reports rows without a target as information', () => {
    expect(judge(undefined, 3, 2)).toEqual({ verdict: 'INFO', ratio: 1.5 });
  });

  it('prints each kind of target', () => {
    expect(describeTarget({ kind: 'ratio-at-least', min: 0.75 })).toBe('>= 0.75x');
    expect(describeTarget({ kind: 'ratio-at-most', max: 2 })).toBe('<= 2x');
    expect(describeTarget({ kind: 'at-most', max: 5, unit: 'ms' })).toBe('<= 5 ms');
    expect(describeTarget({ kind: 'at-least', min: 4000, unit: '/s' })).toBe('>= 4000 /s');
    expect(describeTarget({ kind: 'added-at-most', max: 1, unit: 'ms' })).toBe('+<= 1 ms');
  });
});
