import type { AppSlot } from './app-process';

/** One JSON log line of an app (pino), with the fields the scenarios read. */
export interface LogLine {
  time?: string;
  msg?: string;
  [field: string]: unknown;
}

/**
 * Where each slot's log stood at one moment, so a scenario can read what its processes
 * logged since (every start of a slot appends to the same file).
 */
export class LogMarks {
  private readonly offsets: Map<AppSlot, number>;

  constructor(private readonly slots: readonly AppSlot[]) {
    this.offsets = new Map(slots.map((slot) => [slot, slot.logSize()]));
  }

  /** The JSON lines `slot` (or every slot) logged since the mark. */
  lines(slot?: AppSlot): LogLine[] {
    const out: LogLine[] = [];
    for (const s of slot ? [slot] : this.slots) {
      for (const line of s.logSince(this.offsets.get(s) ?? 0).split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          out.push(JSON.parse(line) as LogLine);
        } catch {
          // a line cut by a SIGKILL mid-write
        }
      }
    }
    return out;
  }

  /** How many lines since the mark have a message containing `msg` (and these fields). */
  count(msg: string, fields: Record<string, unknown> = {}, slot?: AppSlot): number {
    return this.lines(slot).filter(
      (line) =>
        typeof line.msg === 'string' &&
        line.msg.includes(msg) &&
        Object.entries(fields).every(([key, value]) => line[key] === value),
    ).length;
  }
}
