import { judgeStep, slopePerSecond, sustainableRate, type DepthSample } from './ramp';

function series(durationMs: number, depthAt: (t: number) => number): DepthSample[] {
  const points: DepthSample[] = [];
  for (let t = 0; t <= durationMs; t += 250) points.push({ t, depth: depthAt(t) });
  return points;
}

describe('slopePerSecond', () => {
  it('fits the trend of the depth in deliveries per second', () => {
    expect(slopePerSecond(series(4000, (t) => 100 + 0.5 * t))).toBeCloseTo(500);
    expect(slopePerSecond(series(4000, () => 42))).toBeCloseTo(0);
  });

  it('is 0 with fewer than two points', () => {
    expect(slopePerSecond([])).toBe(0);
    expect(slopePerSecond([{ t: 0, depth: 9 }])).toBe(0);
  });
});

describe('judgeStep', () => {
  const base = { rate: 2000, durationMs: 10_000, accepted: 20_000, failed: 0 };

  it('calls a rate sustainable when the backlog stays small and flat', () => {
    const depth = series(10_000, (t) => (t < 1000 ? t / 10 : 50 + ((t / 250) % 2) * 20));
    expect(judgeStep({ ...base, depth })).toMatchObject({ sustainable: true, reasons: [] });
  });

  it('ignores the pipeline filling up in the first half', () => {
    const depth = series(10_000, (t) => (t < 5000 ? t / 10 : 200));
    expect(judgeStep({ ...base, depth }).sustainable).toBe(true);
  });

  it('refuses a backlog that keeps growing', () => {
    const depth = series(10_000, (t) => t / 10);
    const judged = judgeStep({ ...base, depth });
    expect(judged.sustainable).toBe(false);
    expect(judged.growthPerSecond).toBeCloseTo(100);
    expect(judged.reasons).toEqual(['queue grew 100/s']);
  });

  it('refuses a flat backlog longer than half a second of traffic', () => {
    const judged = judgeStep({ ...base, depth: series(10_000, () => 1500) });
    expect(judged.sustainable).toBe(false);
    expect(judged.reasons).toEqual(['1500 deliveries still queued at the end']);
  });

  it('refuses a rate ingress could not take', () => {
    const judged = judgeStep({ ...base, accepted: 15_000, failed: 12, depth: [] });
    expect(judged.sustainable).toBe(false);
    expect(judged.acceptedRate).toBe(1500);
    expect(judged.reasons).toEqual([
      'ingress accepted 1500/s of 2000/s',
      '12 webhook POSTs failed or not sent',
    ]);
  });
});

describe('sustainableRate', () => {
  it('is the highest rate before the first step that failed', () => {
    expect(
      sustainableRate([
        { rate: 1000, sustainable: true },
        { rate: 2000, sustainable: true },
        { rate: 3000, sustainable: false },
        { rate: 4000, sustainable: true },
      ]),
    ).toBe(2000);
    expect(sustainableRate([{ rate: 1000, sustainable: false }])).toBe(0);
  });
});
