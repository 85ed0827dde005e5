import { sharedRedisNote } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import type { RelaygramInstall } from '../harness/relaygram-install';
import { failedRow, firstLine, row } from '../report/results';
import { openPath, type PathRig, type RunningPath } from './end-to-end-path';
import {
  LIGHT_RATE,
  RATE,
  SECTION,
  cpuPerUpdate,
  warmUp,
  type AtRate,
  type Ramp,
} from './end-to-end-steps';

const OFF = 'delivery log off';
/** What the issue allows the delivery log to move the end-to-end rows by. */
const ALLOWED_SHARE = 0.05;

/** At a rate both paths sustain: the latency the log adds, not the backlog it grows. */
const P99_RATIO_ROW = {
  section: SECTION,
  name: `delivery log on vs off: p99 POST to receipt (${LIGHT_RATE}/s)`,
  unit: 'ms',
  target: { kind: 'ratio-at-most', max: 1 + ALLOWED_SHARE },
} as const;
const RATE_RATIO_ROW = {
  section: SECTION,
  name: 'delivery log on vs off: sustainable rate',
  unit: 'updates/s',
  target: { kind: 'ratio-at-least', min: 1 - ALLOWED_SHARE },
} as const;
/** The rows with a target this comparison adds: MISS when the section could not run. */
export const LOG_OFF_TARGET_ROWS = [P99_RATIO_ROW, RATE_RATIO_ROW] as const;

/** One path's runs at the light and the target rate, and up the ramp. */
export interface PathRuns {
  light: AtRate;
  fixed: AtRate;
  ramp: Ramp;
}

/**
 * The path the section's is compared with for the delivery log's cost: a config that
 * differs only in `delivery_log.enabled: false`, apps of their own under a prefix of
 * their own, warmed up. Its install is returned whenever one was made, for closing.
 */
export async function openLogOffPath(
  ctx: BenchContext,
  prefix: string,
  rig: PathRig,
): Promise<{ install?: RelaygramInstall; path?: RunningPath; failure?: string }> {
  let opened;
  try {
    const config = ctx.options.sameSides ? {} : { delivery_log: { enabled: false } };
    opened = await openPath(ctx, prefix, rig, 'log-off', config);
  } catch (error) {
    return { failure: `with the delivery log off, an app did not start: ${firstLine(error)}` };
  }
  const warmFailure = await warmUp(ctx, opened.path);
  if (warmFailure) {
    return { install: opened.install, failure: `with the delivery log off: ${warmFailure}` };
  }
  return opened;
}

/** The log-off path's rows, and the on/off ratios the 5 % is read from. */
export function logOffRows(ctx: BenchContext, on: PathRuns, off: PathRuns): void {
  const { light, fixed, ramp } = off;
  const cpuRow = (app: string, pid: number | undefined) =>
    row({
      section: SECTION,
      name: `${app} CPU per update (${RATE}/s), ${OFF}`,
      unit: 'µs',
      value: cpuPerUpdate(fixed, pid),
    });
  ctx.rows.push(
    row({
      section: SECTION,
      name: `p50 POST to receipt (${LIGHT_RATE}/s), ${OFF}`,
      unit: 'ms',
      value: light.postToReceipt.p50,
      note: light.problems,
    }),
    row({
      section: SECTION,
      name: `p99 POST to receipt (${LIGHT_RATE}/s), ${OFF}`,
      unit: 'ms',
      value: light.postToReceipt.p99,
    }),
    row({
      section: SECTION,
      name: `p50 POST to receipt (${RATE}/s), ${OFF}`,
      unit: 'ms',
      value: fixed.postToReceipt.p50,
      note: fixed.problems,
    }),
    row({
      section: SECTION,
      name: `p99 POST to receipt (${RATE}/s), ${OFF}`,
      unit: 'ms',
      value: fixed.postToReceipt.p99,
    }),
    cpuRow('ingress', fixed.pids.ingress),
    cpuRow('dispatcher', fixed.pids.dispatcher),
    ...(ctx.redis.pid ? [cpuRow('Redis', ctx.redis.pid)] : []),
    row({
      section: SECTION,
      name: `sustainable rate (ramp), ${OFF}`,
      unit: 'updates/s',
      value: ramp.sustainable,
      note: ramp.failedStep && `${ramp.failedStep.rate}/s: ${ramp.failedStep.reasons.join(', ')}`,
    }),
    row({
      ...P99_RATIO_ROW,
      value: on.light.postToReceipt.p99,
      baseline: light.postToReceipt.p99,
      baselineName: 'log off',
    }),
    row({
      section: SECTION,
      name: `delivery log on vs off: p99 POST to receipt (${RATE}/s)`,
      unit: 'ms',
      value: on.fixed.postToReceipt.p99,
      baseline: fixed.postToReceipt.p99,
      baselineName: 'log off',
      note:
        on.ramp.sustainable < RATE || ramp.sustainable < RATE
          ? `past the sustainable rate (${on.ramp.sustainable} / ${ramp.sustainable}/s): p99 is the backlog`
          : undefined,
    }),
    row({
      ...RATE_RATIO_ROW,
      value: on.ramp.sustainable,
      baseline: ramp.sustainable,
      baselineName: 'log off',
      note:
        on.ramp.sustainable === 0 && ramp.sustainable === 0
          ? 'neither run sustained the lowest step'
          : undefined,
    }),
    cpuRatioRow(ctx, LIGHT_RATE, on.light, light),
    cpuRatioRow(ctx, RATE, on.fixed, fixed),
  );
}

function cpuRatioRow(ctx: BenchContext, rate: number, on: AtRate, off: AtRate) {
  return row({
    section: SECTION,
    name: `delivery log on vs off: CPU per update (${rate}/s)`,
    unit: 'µs',
    value: totalCpuPerUpdate(ctx, on),
    baseline: totalCpuPerUpdate(ctx, off),
    baselineName: 'log off',
    note: [
      `ingress + dispatcher${ctx.redis.pid ? ' + Redis' : ''}`,
      ctx.redis.pid ? sharedRedisNote(ctx) : undefined,
    ]
      .filter(Boolean)
      .join('; '),
  });
}

/** CPU per update of everything the path runs on (Redis when its pid is known). */
export function totalCpuPerUpdate(ctx: BenchContext, run: AtRate): number | undefined {
  const parts = [run.pids.ingress, run.pids.dispatcher, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
  let total = 0;
  for (const pid of parts) {
    const micros = cpuPerUpdate(run, pid);
    if (micros === undefined) return undefined;
    total += micros;
  }
  return total;
}

export function missRatios(ctx: BenchContext, reason: string): void {
  ctx.log(`e2e: ${reason}`);
  ctx.rows.push(...LOG_OFF_TARGET_ROWS.map((spec) => failedRow(spec, reason)));
}
