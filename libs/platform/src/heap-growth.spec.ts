import { execFileSync } from 'node:child_process';
import { HEAP_GROWING_PERCENT, heapGrowthFlags } from './heap-growth';

describe('heapGrowthFlags', () => {
  it('bounds the old generation at start', () => {
    expect(heapGrowthFlags([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    expect(heapGrowthFlags(['--max-semi-space-size=8', '--enable-source-maps'])).toEqual([
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    ]);
  });

  it("leaves an operator's own bound alone, spelt either way", () => {
    expect(heapGrowthFlags(['--heap-growing-percent=200'])).toEqual([]);
    expect(heapGrowthFlags(['--heap_growing_percent=10'])).toEqual([]);
  });

  it('is not fooled by a flag that only starts alike', () => {
    expect(heapGrowthFlags(['--heap-growing-percent-x=1'])).toHaveLength(1);
  });
});

/**
 * The flags take effect when set after start, as `boundHeapGrowth` sets them: a child
 * process churns through short-lived objects that survive a scavenge or two and die in
 * the old generation (as deliveries in flight do), and reports the old space's peak
 * size with and without them.
 */
describe('boundHeapGrowth in a running process', () => {
  const peakOldSpaceMb = (bound: boolean): number => {
    const script = `
      const v8 = require('node:v8');
      for (const flag of ${JSON.stringify(bound ? heapGrowthFlags([]) : [])}) v8.setFlagsFromString(flag);
      const ring = new Array(100000);
      let peak = 0;
      for (let i = 0; i < 6000000; i++) {
        ring[i % ring.length] = { id: i, text: 'update ' + i, parts: [i, i + 1, i + 2] };
        if (i % 2000 === 0) {
          const old = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
          peak = Math.max(peak, old.space_size);
        }
      }
      process.stdout.write(String(peak / 1048576));
    `;
    const out = execFileSync(process.execPath, ['--max-semi-space-size=2', '-e', script], {
      encoding: 'utf8',
    });
    return Number(out);
  };

  it('keeps the old generation smaller than V8 lets it grow by default', () => {
    const unbounded = peakOldSpaceMb(false);
    const bounded = peakOldSpaceMb(true);
    expect(bounded).toBeLessThan(unbounded * 0.75);
  }, 60_000);
});
