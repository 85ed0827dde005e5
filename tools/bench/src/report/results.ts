import { errorMessage } from '@relaygram/contracts';
import { describeTarget, judge, type Target, type Verdict } from '../stats/targets';

export interface RowInput {
  section: string;
  name: string;
  value?: number;
  unit: string;
  baseline?: number;
  baselineName?: string;
  target?: Target;
  /** Shown when the row missed, or to qualify a number. */
  note?: string;
}

export interface Row extends RowInput {
  verdict: Verdict;
  ratio?: number;
  targetText?: string;
}

export function row(input: RowInput): Row {
  const judged = judge(input.target, input.value, input.baseline);
  const note = [input.note, judged.reason].filter(Boolean).join('; ') || undefined;
  return {
    ...input,
    verdict: judged.verdict,
    ratio: judged.ratio,
    targetText: input.target ? describeTarget(input.target) : undefined,
    note,
  };
}

/** A row for a measurement that could not be made: MISS when it has a target. */
export function failedRow(input: Omit<RowInput, 'value' | 'baseline'>, reason: string): Row {
  return row({ ...input, note: reason });
}

/**
 * An error on one line for a table note: its first line and, when an app's log tail
 * follows (a failed start), the last line of that log, which usually says why.
 */
export function firstLine(error: unknown): string {
  const lines = errorMessage(error)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? 'unknown error';
  const last = lines.length > 1 ? lines[lines.length - 1].slice(0, 240) : undefined;
  return last ? `${first} ${last}` : first;
}

export function formatValue(value: number | undefined, unit: string): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const text = value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: 0,
  });
  return unit ? `${text} ${unit}` : text;
}

/** The table printed at the end of a run: one line per row, notes below. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['section', 'measurement', 'relaygram', 'baseline', 'ratio', 'target', 'result'];
  const lines = rows.map((r) => [
    r.section,
    r.name,
    formatValue(r.value, r.unit),
    r.baseline === undefined
      ? '-'
      : `${formatValue(r.baseline, r.unit)}${r.baselineName ? ` (${r.baselineName})` : ''}`,
    r.ratio === undefined ? '-' : `${r.ratio.toFixed(2)}x`,
    r.targetText ?? '-',
    r.verdict === 'INFO' ? '' : r.verdict,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  const out = [
    render(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...lines.map(render),
  ];
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.section} / ${r.name}: ${r.note}`);
  if (notes.length) out.push('', 'notes:', ...notes);
  return out.join('\n');
}
