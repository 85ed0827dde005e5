/**
 * Redis's `INFO commandstats`, reduced to what the bench reports per accepted update:
 * every command Redis ran (those run inside scripts included, as Redis counts them) and
 * the script calls among them (EVALSHA, EVAL and their read-only forms, FCALL).
 */
export interface CommandCounts {
  /** Calls by command name, lower case (`evalsha`, `hset`...). */
  calls: Map<string, number>;
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro']);
/** The bench's own reads of the stats, left out of the counts. */
const OWN_COMMANDS = new Set(['info']);

export function parseCommandStats(info: string): CommandCounts {
  const calls = new Map<string, number>();
  for (const line of info.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match) calls.set(match[1].toLowerCase(), Number(match[2]));
  }
  return { calls };
}

export interface CommandDelta {
  commands: number;
  scripts: number;
  /** The commands that ran most, by calls, for the details file. */
  top: [string, number][];
}

/** What ran between two readings (commands the later one has anew count from zero). */
export function commandDelta(before: CommandCounts, after: CommandCounts): CommandDelta {
  let commands = 0;
  let scripts = 0;
  const each: [string, number][] = [];
  for (const [name, n] of after.calls) {
    if (OWN_COMMANDS.has(name)) continue;
    const delta = n - (before.calls.get(name) ?? 0);
    if (delta <= 0) continue;
    commands += delta;
    if (SCRIPT_COMMANDS.has(name)) scripts += delta;
    each.push([name, delta]);
  }
  each.sort((a, b) => b[1] - a[1]);
  return { commands, scripts, top: each.slice(0, 15) };
}
