import { sharedRedisNote } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import { deleteKeys } from '../harness/redis-target';
import type { RelaygramInstall } from '../harness/relaygram-install';
import { failedRow, firstLine, row } from '../report/results';
import { openPath, type PathRig, type RunningPath } from './end-to-end-path';
import {
  RAMP,
  RATE,
  SECTION,
  atRateDetails,
  cpuPerUpdate,
  rampUp,
  runAtRate,
  warmUp,
  type AtRate,
  type Ramp,
} from './end-to-end-steps';

const OFF = 'delivery log off';
/** What the issue allows the delivery log to move the end-to-end rows by. */
const ALLOWED_SHARE = 0.05;

const P99_RATIO_ROW = {
  section: SECTION,
  name: `delivery log on vs off: p99 POST to receipt (${RATE}/s)`,
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

/** The section's run with the delivery log on (as shipped), to compare with. */
export interface LogOnRun {
  fixed: AtRate;
  ramp: Ramp;
  rampStepSec: number;
}

/**
 * The delivery log's cost: the 2,000/s run (as long as the one with the log on) and
 * the ramp again, from a config that differs only in `delivery_log.enabled: false`,
 * on apps of their own under a prefix of their own. The ramp starts at the rate the
 * log-on run sustained (stats/ramp.ts nextRampRate), so only the steps that decide
 * run again. The log-on run comes first, with the 1,000/s run before its 2,000/s.
 */
export async function logOffComparison(
  ctx: BenchContext,
  prefix: string,
  rig: PathRig,
  on: LogOnRun,
): Promise<Record<string, unknown> | undefined> {
  let install: RelaygramInstall | undefined;
  try {
    let path: RunningPath;
    try {
      ({ install, path } = await openPath(ctx, prefix, rig, 'e2e-log-off', {
        delivery_log: { enabled: false },
      }));
    } catch (error) {
      missRatios(ctx, `with the delivery log off, an app did not start: ${firstLine(error)}`);
      return undefined;
    }
    const warmFailure = await warmUp(ctx, path);
    if (warmFailure) {
      missRatios(ctx, `with the delivery log off: ${warmFailure}`);
      return undefined;
    }
    ctx.log('e2e: again with the delivery log off');
    const fixed = await runAtRate(ctx, path, RATE, on.fixed.seconds);
    const rampFrom = on.ramp.sustainable || RAMP[0];
    const ramp = await rampUp(ctx, path, on.rampStepSec, rampFrom);
    pushRows(ctx, on, { fixed, ramp, rampFrom });
    return { fixed: atRateDetails(fixed), rampFrom, ramp: ramp.steps };
  } finally {
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
}

interface LogOffRun {
  fixed: AtRate;
  ramp: Ramp;
  rampFrom: number;
}

function pushRows(ctx: BenchContext, on: LogOnRun, off: LogOffRun): void {
  const { fixed, ramp, rampFrom } = off;
  const cpuRow = (app: string, pid: number | undefined) =>
    row({
      section: SECTION,
      name: `${app} CPU per update (${RATE}/s), ${OFF}`,
      unit: 'µs',
      value: cpuPerUpdate(fixed, pid),
    });
  const onCpu = totalCpuPerUpdate(ctx, on.fixed);
  const offCpu = totalCpuPerUpdate(ctx, fixed);
  ctx.rows.push(
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
      note: [
        rampFrom > RAMP[0] && `from ${rampFrom}/s, the rate sustained with the log on`,
        ramp.failedStep && `${ramp.failedStep.rate}/s: ${ramp.failedStep.reasons.join(', ')}`,
      ]
        .filter(Boolean)
        .join('; '),
    }),
    row({
      ...P99_RATIO_ROW,
      value: on.fixed.postToReceipt.p99,
      baseline: fixed.postToReceipt.p99,
      baselineName: 'log off',
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
    row({
      section: SECTION,
      name: `delivery log on vs off: CPU per update (${RATE}/s)`,
      unit: 'µs',
      value: onCpu,
      baseline: offCpu,
      baselineName: 'log off',
      note: [
        `ingress + dispatcher${ctx.redis.pid ? ' + Redis' : ''}`,
        ctx.redis.pid ? sharedRedisNote(ctx) : undefined,
      ]
        .filter(Boolean)
        .join('; '),
    }),
  );
}

/** CPU per update of everything the path runs on (Redis when its pid is known). */
function totalCpuPerUpdate(ctx: BenchContext, run: AtRate): number | undefined {
  const parts = [run.pids.ingress, run.pids.dispatcher, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
  let total = 0;
  for (const pid of parts) {
    const micros = cpuPerUpdate(run, pid);
    if (micros === undefined) return undefined;
    total += micros;
  }
  return total;
}

function missRatios(ctx: BenchContext, reason: string): void {
  ctx.log(`e2e: ${reason}`);
  ctx.rows.push(...LOG_OFF_TARGET_ROWS.map((spec) => failedRow(spec, reason)));
}
