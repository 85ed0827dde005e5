import {
  chartMinutes,
  histogramQuantile,
  LATENCY_BOUNDS_S,
  latencyField,
  minuteBucket,
  minuteOf,
} from './minute-buckets';

describe('minute buckets', () => {
  it('cuts time into minutes and charts the last 60, oldest first', () => {
    const now = Date.parse('2026-12-02T10:42:31.500Z');
    expect(minuteOf(now) * 60_000).toBe(Date.parse('2026-12-02T10:42:00Z'));
    const minutes = chartMinutes(now);
    expect(minutes).toHaveLength(60);
    expect(minutes[59]).toBe(minuteOf(now));
    expect(minutes[0]).toBe(minuteOf(now) - 59);
    expect(chartMinutes(now, 3)).toEqual([minuteOf(now) - 2, minuteOf(now) - 1, minuteOf(now)]);
  });

  it('counts a latency in the first bucket whose bound holds it, above the last in +Inf', () => {
    expect(latencyField(0)).toBe('l0');
    expect(latencyField(0.001)).toBe('l0');
    expect(latencyField(0.0011)).toBe('l1');
    expect(latencyField(1)).toBe(`l${LATENCY_BOUNDS_S.indexOf(1)}`);
    expect(latencyField(7200)).toBe(`l${LATENCY_BOUNDS_S.length}`);
  });

  describe('histogramQuantile', () => {
    const bounds = [0.1, 0.5, 1];

    it('is null without observations', () => {
      expect(histogramQuantile(0.5, [0, 0, 0, 0], bounds)).toBeNull();
    });

    it('interpolates inside the bucket the rank falls in, from 0 for the first', () => {
      expect(histogramQuantile(0.5, [2, 0, 0, 0], bounds)).toBeCloseTo(0.05);
      // 10 observations: 5 up to 0.1 s, 5 in (0.1, 0.5]: p50 is 0.1, p90 four fifths into the second.
      expect(histogramQuantile(0.5, [5, 5, 0, 0], bounds)).toBeCloseTo(0.1);
      expect(histogramQuantile(0.9, [5, 5, 0, 0], bounds)).toBeCloseTo(0.42);
      expect(histogramQuantile(0.99, [5, 5, 0, 0], bounds)).toBeCloseTo(0.492);
    });

    it('skips empty buckets and answers the last bound for the +Inf bucket', () => {
      expect(histogramQuantile(0.5, [0, 0, 4, 0], bounds)).toBeCloseTo(0.75);
      expect(histogramQuantile(0.99, [1, 0, 0, 9], bounds)).toBe(1);
    });
  });

  it('reads a stored minute hash, zeros and nulls for what it lacks', () => {
    const minute = minuteOf(Date.parse('2026-12-02T10:42:00Z'));
    expect(minuteBucket(minute, {})).toEqual({
      at: '2026-12-02T10:42:00.000Z',
      accepted: 0,
      delivered: 0,
      failed: 0,
      dead: 0,
      queue: null,
      p50_ms: null,
      p99_ms: null,
    });
    const l10ms = latencyField(0.01);
    const l1s = latencyField(1);
    const bucket = minuteBucket(minute, {
      accepted: '6',
      delivered: '4',
      failed: '3',
      dead: '2',
      queue: '0',
      [l10ms]: '3',
      [l1s]: '1',
    });
    expect(bucket).toMatchObject({ accepted: 6, delivered: 4, failed: 3, dead: 2, queue: 0 });
    // Ranks 2 and 3.96 of 4: inside the 5-10 ms bucket, and inside the 0.5-1 s one.
    expect(bucket.p50_ms).toBeCloseTo(8.3, 1);
    expect(bucket.p99_ms).toBeCloseTo(980, 0);
  });
});
