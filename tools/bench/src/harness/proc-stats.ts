import { readFileSync } from 'node:fs';
import { request } from 'undici';

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on every Linux Node runs on. */
const USER_HZ = 100;

/**
 * CPU time (user + system) a process has used so far, in µs, read from
 * /proc/<pid>/stat so that any process can be measured (apps, baselines, redis-server)
 * without its cooperation. Resolution is 10 ms: runs last seconds, so the error stays
 * under a percent. Undefined when the process is gone or /proc is not there.
 */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after it are space-separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
    return ((utime + stime) * 1e6) / USER_HZ;
  } catch {
    return undefined;
  }
}

/** Resident set size in bytes (VmRSS), or undefined when the process is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU used by a set of processes between start() and stop(), per process, in µs. */
export class CpuWindow {
  private readonly before = new Map<number, number | undefined>();

  constructor(private readonly pids: readonly number[]) {}

  start(): this {
    for (const pid of this.pids) this.before.set(pid, cpuMicros(pid));
    return this;
  }

  stop(): Map<number, number | undefined> {
    const used = new Map<number, number | undefined>();
    for (const pid of this.pids) {
      const a = this.before.get(pid);
      const b = cpuMicros(pid);
      used.set(pid, a === undefined || b === undefined ? undefined : b - a);
    }
    return used;
  }
}

/** Samples the RSS of processes every intervalMs and keeps the peak of each. */
export class RssSampler {
  private readonly peaks = new Map<number, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pids: readonly number[],
    private readonly intervalMs = 250,
  ) {}

  start(): this {
    const sample = () => {
      for (const pid of this.pids) {
        const rss = rssBytes(pid);
        if (rss !== undefined) this.peaks.set(pid, Math.max(rss, this.peaks.get(pid) ?? 0));
      }
    };
    sample();
    this.timer = setInterval(sample, this.intervalMs);
    return this;
  }

  stop(): Map<number, number> {
    if (this.timer) clearInterval(this.timer);
    return this.peaks;
  }
}

export interface HeapStats {
  heapUsedMB?: number;
  heapTotalMB?: number;
  externalMB?: number;
}

/**
 * V8 heap figures from an app's Prometheus endpoint (prom-client's default metrics),
 * to tell a large heap from memory held elsewhere when RSS is high.
 */
export async function scrapeHeap(adminUrl: string): Promise<HeapStats> {
  try {
    const res = await request(`${adminUrl}/metrics`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    const text = await res.body.text();
    const metric = (name: string) => {
      const match = new RegExp(`^\\w*${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
      return match ? Number(match[1]) / 2 ** 20 : undefined;
    };
    return {
      heapUsedMB: metric('nodejs_heap_size_used_bytes'),
      heapTotalMB: metric('nodejs_heap_size_total_bytes'),
      externalMB: metric('nodejs_external_memory_bytes'),
    };
  } catch {
    return {};
  }
}

export function describeHeap(heap: HeapStats | undefined): string | undefined {
  if (!heap || heap.heapTotalMB === undefined) return undefined;
  const mb = (v?: number) => (v === undefined ? '?' : `${Math.round(v)} MB`);
  return `V8 heap ${mb(heap.heapUsedMB)} used of ${mb(heap.heapTotalMB)}, external ${mb(heap.externalMB)}`;
}
