import type { ScenarioResult } from '../scenarios/scenario';

const COLUMNS = [
  'scenario',
  'accepted',
  'expected',
  'delivered',
  'dup',
  'lost',
  'order viol.',
  'dead (asked/other)',
  'drain',
  'since last fault',
  'result',
] as const;

function seconds(ms: number | undefined): string {
  return ms === undefined ? 'not drained' : `${(ms / 1000).toFixed(1)} s`;
}

/** The audit table, as Markdown (it goes into docs/guarantees.md as printed). */
export function formatTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) => [
    r.name,
    String(r.audit.accepted),
    String(r.audit.expected),
    String(r.audit.delivered),
    String(r.audit.duplicates),
    String(r.audit.lost),
    String(r.audit.orderViolations),
    `${r.audit.deadAsked}/${r.audit.deadUnexpected}`,
    seconds(r.drainMs),
    r.sinceFaultMs === undefined ? '–' : seconds(r.sinceFaultMs),
    r.ok ? 'PASS' : 'FAIL',
  ]);
  const widths = COLUMNS.map((c, i) =>
    Math.max(c.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`;
  return [line(COLUMNS), rule, ...rows.map(line)].join('\n');
}

/** Notes and findings under the table: what each scenario did, and anything that failed. */
export function formatDetails(results: readonly ScenarioResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`- ${r.name} (${seconds(r.totalMs)} in all): ${r.notes.join('; ') || 'no notes'}`);
    const a = r.audit;
    if (a.optional) {
      lines.push(
        `  optional deliveries (accepted while the config changed): ${a.optionalDelivered} of ${a.optional} arrived`,
      );
    }
    for (const failure of r.failures) lines.push(`  ! ${failure}`);
    if (a.stray || a.doubleAccepted) {
      lines.push(`  stray deliveries ${a.stray}, accepted twice ${a.doubleAccepted}`);
    }
    for (const finding of a.findings) lines.push(`  ! ${finding}`);
    for (const problem of r.receiverProblems.slice(0, 10)) lines.push(`  ! receiver: ${problem}`);
    if (r.receiverProblemCount > 10) {
      lines.push(`  ! receiver: ${r.receiverProblemCount - 10} more problems`);
    }
  }
  return lines.join('\n');
}
