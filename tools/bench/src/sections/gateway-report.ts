import type { BenchContext } from '../harness/bench-context';
import { failedRow, row, type Row } from '../report/results';
import type { Samples } from '../stats/percentiles';

export const SECTION = '4 gateway';
export const CONNECTIONS = 50;

/** One way to send the same sendMessage, with what its calls added up to. */
export interface Path {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  pid?: number;
  ok: number;
  failed: number;
  durationMs: number;
  cpuMicros: number;
  latencies: Samples;
  /** Response times with one connection: the cost of one call, without queueing. */
  single: Samples;
}

/** The paths in the order they are measured, each next to the one it is compared with. */
export type GatewayPaths = [
  direct: Path,
  rest: Path,
  restUnpaced: Path,
  dropIn: Path,
  dropInUnpaced: Path,
  bare: Path,
];

const rps = (p: Path) => (p.durationMs > 0 ? (p.ok * 1000) / p.durationMs : undefined);

/** The section's rows and details; a path that failed its probe misses its rows with the reason. */
export function reportRows(
  ctx: BenchContext,
  paths: GatewayPaths,
  broken: Map<string, string>,
): void {
  const [direct, rest, restUnpaced, dropIn, dropInUnpaced, bare] = paths;
  ctx.rows.push(...againstDirect(direct, [rest, dropIn], broken));
  ctx.rows.push(
    ...pacingOnOff(
      [
        [rest, restUnpaced, 'messages/send'],
        [dropIn, dropInUnpaced, 'drop-in'],
      ],
      broken,
    ),
  );
  if (!broken.has(bare.name)) ctx.rows.push(...bareProxy(direct, bare));
  ctx.details.gateway = paths.map((p) => ({
    name: p.name,
    calls: p.ok,
    failed: p.failed,
    rps: rps(p),
    latencyMs: p.latencies.summary(),
    singleConnectionMs: p.single.summary(),
    cpuMicrosPerCall: p.ok > 0 ? p.cpuMicros / p.ok : undefined,
    broken: broken.get(p.name),
  }));
}

/** Each gateway path (pacing on) against sending straight to the emulator. */
function againstDirect(direct: Path, gatewayPaths: Path[], broken: Map<string, string>) {
  const out: Row[] = [];
  for (const p of gatewayPaths) {
    const problem = broken.get(p.name);
    if (problem) {
      out.push(
        failedRow(
          {
            section: SECTION,
            name: `${p.name} throughput`,
            unit: 'req/s',
            target: { kind: 'ratio-at-least', min: 0.7 },
          },
          problem,
        ),
        failedRow(
          {
            section: SECTION,
            name: `${p.name} added p50`,
            unit: 'ms',
            target: { kind: 'added-at-most', max: 1, unit: 'ms' },
          },
          problem,
        ),
      );
      continue;
    }
    out.push(
      row({
        section: SECTION,
        name: `${p.name} throughput (${CONNECTIONS} conn.)`,
        unit: 'req/s',
        value: rps(p),
        baseline: rps(direct),
        baselineName: 'direct',
        target: { kind: 'ratio-at-least', min: 0.7 },
        note: p.failed ? `${p.failed} calls failed` : undefined,
      }),
      row({
        section: SECTION,
        name: `${p.name} p50, 1 conn. (added)`,
        unit: 'ms',
        value: p.single.percentile(50),
        baseline: direct.single.percentile(50),
        baselineName: 'direct',
        target: { kind: 'added-at-most', max: 1, unit: 'ms' },
      }),
      row({
        section: SECTION,
        name: `${p.name} gateway CPU per call`,
        unit: 'µs',
        value: p.ok > 0 ? p.cpuMicros / p.ok : undefined,
      }),
    );
  }
  return out;
}

/** What pacing costs: each gateway path with pacing on, against the same with pacing off. */
function pacingOnOff(pairs: [on: Path, off: Path, name: string][], broken: Map<string, string>) {
  const out: Row[] = [];
  for (const [on, off, name] of pairs) {
    const problem = broken.get(on.name) ?? broken.get(off.name);
    const throughput = {
      section: SECTION,
      name: `${name} throughput, pacing on vs off (${CONNECTIONS} conn.)`,
      unit: 'req/s',
      target: { kind: 'ratio-at-least' as const, min: 0.85 },
    };
    const added = {
      section: SECTION,
      name: `${name} p50 added by pacing, 1 conn.`,
      unit: 'ms',
      target: { kind: 'added-at-most' as const, max: 0.3, unit: 'ms' },
    };
    if (problem) {
      out.push(failedRow(throughput, problem), failedRow(added, problem));
      continue;
    }
    out.push(
      row({
        ...throughput,
        value: rps(on),
        baseline: rps(off),
        baselineName: 'pacing off',
        note: on.failed ? `${on.failed} calls failed` : undefined,
      }),
      row({
        ...added,
        value: on.single.percentile(50),
        baseline: off.single.percentile(50),
        baselineName: 'pacing off',
      }),
      row({
        section: SECTION,
        name: `${name} gateway CPU per call, pacing off`,
        unit: 'µs',
        value: off.ok > 0 ? off.cpuMicros / off.ok : undefined,
      }),
    );
  }
  return out;
}

/** B4, a bare proxy, as a reference: how much of direct's throughput any extra hop costs here. */
function bareProxy(direct: Path, bare: Path): Row[] {
  return [
    row({
      section: SECTION,
      name: `${bare.name} throughput (reference)`,
      unit: 'req/s',
      value: rps(bare),
      baseline: rps(direct),
      baselineName: 'direct',
      note: 'Fastify + undici relaying bytes: the most any proxy keeps of direct on this machine',
    }),
    row({
      section: SECTION,
      name: `${bare.name} CPU per call`,
      unit: 'µs',
      value: bare.ok > 0 ? bare.cpuMicros / bare.ok : undefined,
    }),
  ];
}

export function missAll(ctx: BenchContext, reason: string): void {
  for (const name of ['messages/send', 'drop-in']) {
    ctx.rows.push(
      failedRow(
        {
          section: SECTION,
          name: `${name} throughput, pacing on vs off`,
          unit: 'req/s',
          target: { kind: 'ratio-at-least', min: 0.85 },
        },
        reason,
      ),
      failedRow(
        {
          section: SECTION,
          name: `${name} p50 added by pacing`,
          unit: 'ms',
          target: { kind: 'added-at-most', max: 0.3, unit: 'ms' },
        },
        reason,
      ),
    );
    ctx.rows.push(
      failedRow(
        {
          section: SECTION,
          name: `${name} throughput`,
          unit: 'req/s',
          target: { kind: 'ratio-at-least', min: 0.7 },
        },
        reason,
      ),
      failedRow(
        {
          section: SECTION,
          name: `${name} added p50`,
          unit: 'ms',
          target: { kind: 'added-at-most', max: 1, unit: 'ms' },
        },
        reason,
      ),
    );
  }
}
