const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION = /^(\d+)(ms|[smhd])$/;
const SECONDS = /^\d+$/;

/**
 * Parses a config duration (`500ms`, `30s`, `5m`, `24h`, `7d`, or a whole number of seconds, as a
 * YAML number or a digit string) into milliseconds. Anything else, including fractions,
 * negative numbers and values too large to count exactly, gives undefined.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? exactMs(value * 1_000) : undefined;
  }
  if (typeof value !== 'string') return undefined;
  if (SECONDS.test(value)) return exactMs(Number(value) * 1_000);
  const match = DURATION.exec(value);
  if (!match) return undefined;
  return exactMs(Number(match[1]) * UNIT_MS[match[2]]);
}

/** The shortest exact spelling of a duration, for messages: 90000 → `90s`, 300000 → `5m`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  for (const unit of ['d', 'h', 'm', 's']) {
    const size = UNIT_MS[unit];
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function exactMs(ms: number): number | undefined {
  return Number.isSafeInteger(ms) ? ms : undefined;
}
