/**
 * Targets of issue 8 and how a measurement is judged against them. A target compares
 * either the measured value itself, the ratio measured / baseline, or the difference
 * measured - baseline, so absolute numbers that drift between runs and machines only
 * matter where the issue states an absolute limit.
 */
export type Target =
  | { kind: 'ratio-at-least'; min: number }
  | { kind: 'ratio-at-most'; max: number }
  | { kind: 'at-most'; max: number; unit: string }
  | { kind: 'at-least'; min: number; unit: string }
  | { kind: 'added-at-most'; max: number; unit: string };

export type Verdict = 'PASS' | 'MISS' | 'INFO';

export interface Judgement {
  verdict: Verdict;
  ratio?: number;
  /** Why a row missed when there was nothing to compare (no value, no baseline). */
  reason?: string;
}

/** measured / baseline, or undefined when either is missing or the baseline is not positive. */
export function ratio(
  measured: number | undefined,
  baseline: number | undefined,
): number | undefined {
  if (measured === undefined || baseline === undefined) return undefined;
  if (!Number.isFinite(measured) || !Number.isFinite(baseline) || baseline <= 0) return undefined;
  return measured / baseline;
}

export function describeTarget(target: Target): string {
  switch (target.kind) {
    case 'ratio-at-least':
      return `>= ${target.min}x`;
    case 'ratio-at-most':
      return `<= ${target.max}x`;
    case 'at-most':
      return `<= ${target.max} ${target.unit}`;
    case 'at-least':
      return `>= ${target.min} ${target.unit}`;
    case 'added-at-most':
      return `+<= ${target.max} ${target.unit}`;
  }
}

/**
 * PASS or MISS of one measurement. A missing value or baseline is a MISS with a
 * reason, never a PASS: a feature that does not work has not met its target.
 */
export function judge(
  target: Target | undefined,
  measured: number | undefined,
  baseline?: number,
): Judgement {
  const r = ratio(measured, baseline);
  if (!target) return { verdict: 'INFO', ratio: r };
  if (measured === undefined || !Number.isFinite(measured)) {
    return { verdict: 'MISS', ratio: r, reason: 'not measured' };
  }
  switch (target.kind) {
    case 'ratio-at-least':
    case 'ratio-at-most': {
      if (r === undefined) return { verdict: 'MISS', reason: 'no baseline to compare with' };
      const ok = target.kind === 'ratio-at-least' ? r >= target.min : r <= target.max;
      return { verdict: ok ? 'PASS' : 'MISS', ratio: r };
    }
    case 'at-most':
      return { verdict: measured <= target.max ? 'PASS' : 'MISS', ratio: r };
    case 'at-least':
      return { verdict: measured >= target.min ? 'PASS' : 'MISS', ratio: r };
    case 'added-at-most': {
      if (baseline === undefined || !Number.isFinite(baseline)) {
        return { verdict: 'MISS', reason: 'no baseline to compare with' };
      }
      return { verdict: measured - baseline <= target.max ? 'PASS' : 'MISS', ratio: r };
    }
  }
}
