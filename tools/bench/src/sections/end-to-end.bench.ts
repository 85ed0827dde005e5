import { BenchChild } from '../harness/bench-child';
import { sharedRedisNote } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import { deleteKeys } from '../harness/redis-target';
import type { RelaygramInstall } from '../harness/relaygram-install';
import { failedRow, firstLine, row } from '../report/results';
import { B5_CONCURRENCY, BarePipelinePath, type BareAtRate } from './end-to-end-baseline';
import { openPath, type PathRig, type RunningPath } from './end-to-end-path';
import {
  LOG_OFF_TARGET_ROWS,
  logOffRows,
  missRatios,
  openLogOffPath,
  totalCpuPerUpdate,
} from './end-to-end-log-off';
import {
  LIGHT_RATE,
  RATE,
  atRateDetails,
  SECTION,
  rampUp,
  runInterleaved,
  warmUp,
  type AtRate,
  type Ramp,
  type RedisWork,
} from './end-to-end-steps';

/** A POST-to-receipt percentile at the target rate, with the most it may be. */
const receiptRow = (percentile: number, max: number) =>
  ({
    section: SECTION,
    name: `p${percentile} POST to receipt (${RATE}/s)`,
    unit: 'ms',
    target: { kind: 'at-most', max, unit: 'ms' },
  }) as const;
const P50_ROW = receiptRow(50, 5);
const P99_ROW = receiptRow(99, 50);
const RAMP_ROW = {
  section: SECTION,
  name: 'sustainable rate (ramp)',
  unit: 'updates/s',
  target: { kind: 'at-least', min: 4000, unit: 'updates/s' },
} as const;

/**
 * Section 3: the whole path, webhook POST to the receiver, with the ingress and
 * dispatcher apps, the load generator, the receiver and Redis all on this machine.
 * First a fixed 1,000 updates/s, then 2,000 (latency from the POST's send time,
 * stamped into the update, to its arrival; the lighter rate shows the path's own
 * latency, the target rate adds the queueing of a busy box); then a ramp of rising
 * rates, each judged by whether the queue kept from growing (see stats/ramp.ts).
 * Every step also runs on a second path with the delivery log off, interleaved with
 * the first (rounds A B B A), for the log's cost.
 */
export async function endToEndBench(ctx: BenchContext): Promise<void> {
  const { quick } = ctx.options;
  const prefix = `${ctx.runPrefix}-e2e`;
  const children: BenchChild[] = [];
  const installs: RelaygramInstall[] = [];
  try {
    const receiver = await BenchChild.start('receiver');
    children.push(receiver);
    const { url: receiverUrl } = await receiver.call<{ url: string }>('start', { mode: 'latency' });
    const generator = await BenchChild.start('open-loop', { name: 'open-loop' });
    children.push(generator);
    const rig: PathRig = { receiver, receiverUrl, generator };
    let path: RunningPath;
    try {
      const opened = await openPath(ctx, prefix, rig, 'log-on');
      installs.push(opened.install);
      path = opened.path;
    } catch (error) {
      missAll(ctx, `an app did not start: ${firstLine(error)}`);
      return;
    }
    const warmFailure = await warmUp(ctx, path);
    if (warmFailure) return missAll(ctx, warmFailure);
    const off = await openLogOffPath(ctx, `${prefix}-off`, rig);
    if (off.install) installs.push(off.install);
    const paths = off.path ? [path, off.path] : [path];
    const light = await runInterleaved(ctx, paths, LIGHT_RATE, quick ? 20 : 60);
    lightRateRows(ctx, path, light[0]);
    const fixed = await runInterleaved(ctx, paths, RATE, quick ? 30 : 60);
    const bare = await openBarePipeline(ctx, `${prefix}-b5`, rig);
    if (bare.path) children.push(...bare.path.children);
    const bareFixed = await bare.path?.atRate(RATE, quick ? 15 : 30);
    targetRateRows(ctx, path, fixed[0], bareFixed);
    const ramps = await rampUp(ctx, bare.path ? [...paths, bare.path] : paths, quick ? 3 : 10);
    const bareRamp = bare.path ? ramps[paths.length] : undefined;
    ctx.rows.push(rampRow(ramps[0], bareRamp), bareRampRow(bareRamp, bareFixed, bare.failure));
    if (paths.length === 2) {
      logOffRows(
        ctx,
        { light: light[0], fixed: fixed[0], ramp: ramps[0] },
        { light: light[1], fixed: fixed[1], ramp: ramps[1] },
      );
    } else {
      missRatios(ctx, off.failure ?? 'the path with the delivery log off did not run');
    }
    ctx.details.endToEnd = {
      light: atRateDetails(light[0]),
      fixed: atRateDetails(fixed[0]),
      ramp: ramps[0].steps,
      bare: bareFixed && { fixed: bareFixed, ramp: bareRamp?.steps },
      peakRssBytes: { ingress: ctx.rss.ingress, dispatcher: ctx.rss.dispatcher },
      deliveryLogOff: fixed[1] && {
        light: atRateDetails(light[1]),
        fixed: atRateDetails(fixed[1]),
        ramp: ramps[1].steps,
      },
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await Promise.all(installs.map((i) => i.close()));
    await deleteKeys(ctx.redis.client, prefix);
    await deleteKeys(ctx.redis.client, `${prefix}-off`);
    await deleteKeys(ctx.redis.client, `${prefix}-b5`);
  }
}

/** B5 started and warmed up (3 s at 1,000/s, drained), or why it could not be. */
async function openBarePipeline(
  ctx: BenchContext,
  prefix: string,
  rig: PathRig,
): Promise<{ path?: BarePipelinePath; failure?: string }> {
  let path: BarePipelinePath;
  try {
    path = await BarePipelinePath.open(ctx, prefix, rig);
  } catch (error) {
    return { failure: `B5 did not start: ${firstLine(error)}` };
  }
  ctx.log('e2e: B5 bare pipeline: warming up (3 s at 1000/s)');
  const warm = await path.send(1000, 3);
  if (warm.ok === 0 || !(await path.drain(30_000))) {
    await path.close();
    return { failure: `B5 did not carry its warm-up (${warm.ok} POSTs accepted)` };
  }
  return { path };
}

/** The path's own latency, at a rate the box handles with CPU to spare. */
function lightRateRows(ctx: BenchContext, path: RunningPath, light: AtRate): void {
  ctx.rows.push(
    row({
      section: SECTION,
      name: `p50 POST to receipt (${LIGHT_RATE}/s)`,
      unit: 'ms',
      value: light.postToReceipt.p50,
      note: light.problems,
    }),
    row({
      section: SECTION,
      name: `p99 POST to receipt (${LIGHT_RATE}/s)`,
      unit: 'ms',
      value: light.postToReceipt.p99,
    }),
    ...workRows(ctx, LIGHT_RATE, light.work, light.used, light.result.ok, path.pids),
  );
}

/** The target rate's rows: latency with the queueing of a busy box; each app's peak RSS and heap. */
function targetRateRows(
  ctx: BenchContext,
  path: RunningPath,
  fixed: AtRate,
  bare: BareAtRate | undefined,
): void {
  const { ingress, dispatcher } = path;
  ctx.heap.ingress = fixed.heap.ingress;
  ctx.heap.dispatcher = fixed.heap.dispatcher;
  ctx.rss.ingress = Math.max(ctx.rss.ingress ?? 0, fixed.peaks.get(ingress.pid) ?? 0);
  ctx.rss.dispatcher = Math.max(ctx.rss.dispatcher ?? 0, fixed.peaks.get(dispatcher.pid) ?? 0);
  ctx.idleRss.ingress = ingress.idleRssBytes;
  ctx.idleRss.dispatcher = dispatcher.idleRssBytes;
  const e2e = fixed.postToReceipt;
  ctx.rows.push(
    row({
      ...P50_ROW,
      value: e2e.p50,
      note: fixed.problems,
      ...bareBaseline(bare?.postToReceipt.p50),
    }),
    row({ ...P99_ROW, value: e2e.p99, ...bareBaseline(bare?.postToReceipt.p99) }),
    row({ section: SECTION, name: 'max POST to receipt', unit: 'ms', value: e2e.max }),
    row({
      section: SECTION,
      name: 'p99 webhook answer',
      unit: 'ms',
      value: fixed.webhookAnswer.p99,
    }),
    ...workRows(ctx, RATE, fixed.work, fixed.used, fixed.result.ok, path.pids),
    bareCpuRow(ctx, fixed, bare),
  );
}

/** The whole path's CPU per update against B5's: what Relaygram's work costs over the stack's. */
function bareCpuRow(ctx: BenchContext, fixed: AtRate, bare: BareAtRate | undefined) {
  const b = bare?.cpuPerUpdate;
  const redis = ctx.redis.pid !== undefined;
  const bareTotal =
    b?.webhook === undefined || b.worker === undefined || (redis && b.redis === undefined)
      ? undefined
      : b.webhook + b.worker + (b.redis ?? 0);
  const micros = (v: number | undefined) => (v === undefined ? '-' : `${Math.round(v)} µs`);
  return row({
    section: SECTION,
    name: `CPU per update (${RATE}/s), whole path`,
    unit: 'µs',
    value: totalCpuPerUpdate(ctx, fixed),
    ...bareBaseline(bareTotal),
    note: [
      `ingress + dispatcher${redis ? ' + Redis' : ''}`,
      b &&
        `B5: webhook ${micros(b.webhook)} + worker ${micros(b.worker)}${redis ? ` + Redis ${micros(b.redis)}` : ''}, ${bare?.redisScripts?.toFixed(2) ?? '-'} Redis scripts per update`,
      redis ? sharedRedisNote(ctx) : undefined,
    ]
      .filter(Boolean)
      .join('; '),
  });
}

/** B5's figure as a row's baseline, when B5 ran. */
function bareBaseline(value: number | undefined): { baseline?: number; baselineName?: string } {
  return value === undefined ? {} : { baseline: value, baselineName: 'B5' };
}

/** Relaygram's sustainable rate, against B5's of the same ramp when it ran. */
function rampRow(ramp: Ramp, bare: Ramp | undefined) {
  return row({
    ...RAMP_ROW,
    value: ramp.sustainable,
    ...bareBaseline(bare?.sustainable),
    note: failedStepNote(ramp),
  });
}

/**
 * B5's own row, a reference like B4's in section 4: what the stack alone sustains here,
 * where the load generator and the receiver share the cores as they do with Relaygram.
 */
function bareRampRow(
  bare: Ramp | undefined,
  fixed: BareAtRate | undefined,
  failure: string | undefined,
) {
  return row({
    section: SECTION,
    name: 'B5 bare pipeline sustainable rate (reference)',
    unit: 'updates/s',
    value: bare?.sustainable,
    note: [
      `Fastify -> BullMQ job -> worker (concurrency ${B5_CONCURRENCY}) -> receiver, no Relaygram code`,
      fixed?.problems && `at ${RATE}/s: ${fixed.problems}`,
      bare ? failedStepNote(bare) : failure,
    ]
      .filter(Boolean)
      .join('; '),
  });
}

function failedStepNote(ramp: Ramp): string | undefined {
  const { failedStep } = ramp;
  return failedStep ? `${failedStep.rate}/s: ${failedStep.reasons.join(', ')}` : undefined;
}

/**
 * Redis scripts and commands per accepted update (from INFO commandstats around the
 * step, drain included) and CPU per update of each process, at one rate.
 */
function workRows(
  ctx: BenchContext,
  rate: number,
  work: Pick<RedisWork, 'scripts' | 'commands'>,
  used: Map<number, number | undefined>,
  accepted: number,
  pids: { ingress: number; dispatcher: number },
) {
  const perUpdate = (pid: number | undefined) => {
    const micros = pid === undefined ? undefined : used.get(pid);
    return micros === undefined || accepted === 0 ? undefined : micros / accepted;
  };
  const shared = sharedRedisNote(ctx);
  return [
    row({
      section: SECTION,
      name: `Redis scripts per update (${rate}/s)`,
      unit: '',
      value: work.scripts,
      ...(rate === RATE ? { target: { kind: 'at-most' as const, max: 2.5, unit: '' } } : {}),
      note: shared,
    }),
    row({
      section: SECTION,
      name: `Redis commands per update (${rate}/s)`,
      unit: '',
      value: work.commands,
    }),
    row({
      section: SECTION,
      name: `ingress CPU per update (${rate}/s)`,
      unit: 'µs',
      value: perUpdate(pids.ingress),
    }),
    row({
      section: SECTION,
      name: `dispatcher CPU per update (${rate}/s)`,
      unit: 'µs',
      value: perUpdate(pids.dispatcher),
    }),
    ...(ctx.redis.pid
      ? [
          row({
            section: SECTION,
            name: `Redis CPU per update (${rate}/s)`,
            unit: 'µs',
            value: perUpdate(ctx.redis.pid),
          }),
        ]
      : []),
  ];
}

function missAll(ctx: BenchContext, reason: string): void {
  ctx.rows.push(
    ...[P50_ROW, P99_ROW, RAMP_ROW, ...LOG_OFF_TARGET_ROWS].map((spec) => failedRow(spec, reason)),
  );
}
