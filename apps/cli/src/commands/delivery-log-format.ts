import { InvalidArgumentError } from 'commander';
import type { LoggedAttempt, TracedDelivery, UpdateTrace } from '@relaygram/contracts';

/** Line width when stdout is not a terminal (a pipe, a file, a test). */
export const DEFAULT_WIDTH = 100;
/** The answer column never gets narrower than this, however wide the rest. */
const MIN_BODY_WIDTH = 16;

const UNITS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** `--since` / `--until`: an age (`90s`, `10m`, `2h`, `1d`) before `now`, or an ISO 8601 time. */
export function parseWhen(raw: string, now = Date.now()): number {
  const age = /^(\d+)([smhd])$/.exec(raw.trim());
  if (age) return now - Number(age[1]) * UNITS[age[2]];
  // Date.parse also takes forms like "2" or "May 1"; only ISO-looking input is a time here.
  const at = /^\d{4}-\d{2}-\d{2}/.test(raw.trim()) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at)) {
    throw new InvalidArgumentError('not an age (30s, 10m, 2h, 1d) or an ISO time');
  }
  return at;
}

/** A Telegram update_id: a whole number, 0 or more. */
export function parseUpdateId(raw: string): number {
  const id = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id))
    throw new InvalidArgumentError('not an update_id (a whole number)');
  return id;
}

export function parseLimit(raw: string): number {
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
    throw new InvalidArgumentError('must be a whole number from 1 to 200');
  }
  return limit;
}

/**
 * The target's answer on one line: JSON-quoted, so newlines and terminal escape
 * sequences print as `\n` and `\u001b` instead of acting, then cut to `width` with `…`.
 * `-` for no answer at all.
 */
export function answerLine(body: string, width: number): string {
  if (!body) return '-';
  const quoted = JSON.stringify(body).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return quoted.length <= width ? quoted : `${quoted.slice(0, Math.max(1, width - 1))}…`;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The status the target gave, or what went wrong when it gave none. */
function answered(attempt: LoggedAttempt): string {
  return attempt.status !== null ? String(attempt.status) : (attempt.error ?? '-');
}

/**
 * Cells padded to their column's widest, then the last cell (an answer, or a title),
 * given the room the line has left.
 */
function table(rows: string[][], width: number, last: (row: number, room: number) => string) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const room = Math.max(MIN_BODY_WIDTH, width - widths.reduce((sum, w) => sum + w + 2, 0));
  return rows.map((row, i) =>
    [...row.map((cell, c) => cell.padEnd(widths[c])), last(i, room)].join('  '),
  );
}

function deliveryHeading(delivery: TracedDelivery): string {
  const state =
    delivery.state === 'retrying' && delivery.nextAttemptAt !== null
      ? `retrying, next attempt at ${iso(delivery.nextAttemptAt)}`
      : delivery.state;
  return `${delivery.route}: ${state} (delivery ${delivery.deliveryId})`;
}

function fanOutLine(trace: UpdateTrace): string {
  const head = `update ${trace.updateId} of bot ${trace.bot}`;
  const at = iso(trace.receivedAt);
  if (trace.status === 'ignored') return `${head}: ignored at ${at}, no route matched it`;
  if (trace.status === 'duplicate') {
    return `${head}: dropped as a duplicate at ${at} (its first arrival has left the log)`;
  }
  const n = trace.deliveries.length;
  return `${head}: queued at ${at} for ${n} route${n === 1 ? '' : 's'}`;
}

/**
 * `relaygram trace`: the fan-out, then each delivery's state and its attempts, oldest
 * first: `#attempt  time  outcome  status-or-error  duration  answer`.
 */
export function traceLines(trace: UpdateTrace, width = DEFAULT_WIDTH): string[] {
  const lines = [fanOutLine(trace)];
  for (const at of trace.duplicatesAt) {
    lines.push(`  received again at ${iso(at)}, dropped as a duplicate`);
  }
  for (const delivery of trace.deliveries) {
    lines.push('', deliveryHeading(delivery));
    if (!delivery.attempts.length) {
      lines.push('  no attempt yet');
      continue;
    }
    const rows = delivery.attempts.map((a) => [
      `  #${a.attempt}`,
      iso(a.at),
      a.outcome,
      answered(a),
      `${a.durationMs} ms`,
    ]);
    lines.push(...table(rows, width, (i, room) => answerLine(delivery.attempts[i].body, room)));
  }
  return lines;
}

/** `relaygram attempts`: a header and one line per attempt, newest first. */
export function attemptLines(attempts: readonly LoggedAttempt[], width = DEFAULT_WIDTH): string[] {
  const header = ['AT', 'BOT', 'UPDATE', 'ATTEMPT', 'OUTCOME', 'STATUS', 'DURATION'];
  const rows = attempts.map((a) => [
    iso(a.at),
    a.bot,
    String(a.updateId),
    `#${a.attempt}`,
    a.outcome,
    answered(a),
    `${a.durationMs} ms`,
  ]);
  return table([header, ...rows], width, (i, room) =>
    i ? answerLine(attempts[i - 1].body, room) : 'ANSWER',
  );
}
