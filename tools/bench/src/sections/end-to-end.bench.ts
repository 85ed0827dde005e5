import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot, sharedRedisNote, withRedisPid } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import { CpuWindow, RssSampler, scrapeHeap } from '../harness/proc-stats';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, secret, type AppProcess } from '../harness/relaygram-install';
import type { UpdateStream } from '../harness/update-factory';
import { failedRow, firstLine, row } from '../report/results';
import { commandDelta, type CommandDelta } from '../stats/command-stats';
import { judgeStep, sustainableRate, type DepthSample, type StepJudgement } from '../stats/ramp';
import { MAX_IN_FLIGHT, RunningPath, summarize } from './end-to-end-path';

const SECTION = '3 end to end';
const ROUTE = 'e2e';
const RATE = 2000;
/** A rate the box handles with CPU to spare: the path's latency without queueing. */
const LIGHT_RATE = 1000;
const CHATS = 1000;
const RAMP = [1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000];

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

type RampStep = StepJudgement & {
  rate: number;
  redisScriptsPerUpdate?: number;
  redisCommandsPerUpdate?: number;
};

/**
 * Section 3: the whole path, webhook POST to the receiver, with the ingress and
 * dispatcher apps, the load generator, the receiver and Redis all on this machine.
 * First a fixed 1,000 updates/s, then 2,000 (latency from the POST's send time,
 * stamped into the update, to its arrival; the lighter rate shows the path's own
 * latency, the target rate adds the queueing of a busy box); then a ramp of rising
 * rates, each judged by whether the queue kept from growing (see stats/ramp.ts).
 */
export async function endToEndBench(ctx: BenchContext): Promise<void> {
  const { quick } = ctx.options;
  const prefix = `${ctx.runPrefix}-e2e`;
  const children: BenchChild[] = [];
  let install: RelaygramInstall | undefined;
  try {
    const receiver = await BenchChild.start('receiver');
    children.push(receiver);
    const { url: receiverUrl } = await receiver.call<{ url: string }>('start', { mode: 'latency' });
    const webhookSecret = secret();
    install = new RelaygramInstall(
      prefix,
      ctx.redis.url,
      ctx.emulator.apiRoot,
      benchBot(ctx, webhookSecret),
      [{ name: ROUTE, targetUrl: `${receiverUrl}/telegram/updates`, ordering: 'chat' }],
    );
    let ingress: AppProcess;
    let dispatcher: AppProcess;
    try {
      ingress = await install.start('ingress', ctx.options.launch, 'e2e-ingress');
      dispatcher = await install.start('dispatcher', ctx.options.launch, 'e2e-dispatcher');
    } catch (error) {
      missAll(ctx, `an app did not start: ${firstLine(error)}`);
      return;
    }
    const generator = await BenchChild.start('open-loop', { name: 'open-loop' });
    children.push(generator);
    const stream: UpdateStream = { firstId: 1, chats: CHATS };
    const depthKey = `${prefix}:bot-stats:${BOT}`;
    const path = new RunningPath(
      ctx,
      ingress,
      dispatcher,
      receiver,
      generator,
      stream,
      webhookSecret,
      depthKey,
    );
    if (!(await warmUp(ctx, path))) return;
    const light = await measureLightRate(ctx, path, quick ? 10 : 20);
    await receiver.call('reset');
    const fixed = await measureTargetRate(ctx, path, quick ? 30 : 60);
    const ramp = await rampUp(ctx, path, quick ? 3 : 10);
    ctx.details.endToEnd = {
      light,
      fixed,
      ramp,
      peakRssBytes: { ingress: ctx.rss.ingress, dispatcher: ctx.rss.dispatcher },
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
}

/** JIT, connection pools, lanes; false (the rows missed) when no POST was accepted. */
async function warmUp(ctx: BenchContext, path: RunningPath): Promise<boolean> {
  ctx.log('e2e: warming up (3 s at 1000/s)');
  const warm = await path.send(1000, 3);
  if (warm.ok === 0) {
    missAll(ctx, `no webhook POST was accepted during warm-up (${warm.failed} failed)`);
    ctx.log(path.ingress.logTail());
    return false;
  }
  await path.drain(30_000);
  await sleep(500);
  await path.receiver.call('reset');
  return true;
}

/** The path's own latency, at a rate the box handles with CPU to spare. */
async function measureLightRate(ctx: BenchContext, path: RunningPath, lightSec: number) {
  ctx.log(`e2e: ${LIGHT_RATE}/s for ${lightSec} s`);
  const lightCpu = new CpuWindow(
    withRedisPid(ctx, [path.ingress.pid, path.dispatcher.pid]),
  ).start();
  const lightStatsBefore = await path.commandStats();
  const light = await path.send(LIGHT_RATE, lightSec);
  await path.drain(30_000);
  const lightUsed = lightCpu.stop();
  const lightWork = redisWork(commandDelta(lightStatsBefore, await path.commandStats()), light.ok);
  await sleep(500);
  const { summary: lightE2e } = await path.takeLatencies();
  const lightNote =
    light.failed + light.skipped > 0
      ? `${light.failed} POSTs failed, ${light.skipped} not sent when due`
      : undefined;
  ctx.rows.push(
    row({
      section: SECTION,
      name: `p50 POST to receipt (${LIGHT_RATE}/s)`,
      unit: 'ms',
      value: lightE2e.p50,
      note: lightNote,
    }),
    row({
      section: SECTION,
      name: `p99 POST to receipt (${LIGHT_RATE}/s)`,
      unit: 'ms',
      value: lightE2e.p99,
    }),
    ...workRows(ctx, LIGHT_RATE, lightWork, lightUsed, light.ok, path.pids),
  );
  return {
    rate: LIGHT_RATE,
    seconds: lightSec,
    accepted: light.ok,
    failed: light.failed,
    skipped: light.skipped,
    postToReceiptMs: lightE2e,
    redisPerUpdate: lightWork,
  };
}

/** The target rate: latency with the queueing of a busy box, and each app's peak RSS and heap. */
async function measureTargetRate(ctx: BenchContext, path: RunningPath, fixedSec: number) {
  const { ingress, dispatcher } = path;
  ctx.log(`e2e: ${RATE}/s for ${fixedSec} s`);
  const rss = new RssSampler([ingress.pid, dispatcher.pid]).start();
  const cpu = new CpuWindow(withRedisPid(ctx, [ingress.pid, dispatcher.pid])).start();
  const fixedStatsBefore = await path.commandStats();
  const fixed = await path.send(RATE, fixedSec);
  ctx.heap.ingress = await scrapeHeap(ingress.adminUrl);
  ctx.heap.dispatcher = await scrapeHeap(dispatcher.adminUrl);
  const drained = await path.drain(30_000);
  const used = cpu.stop();
  const fixedWork = redisWork(commandDelta(fixedStatsBefore, await path.commandStats()), fixed.ok);
  const peaks = rss.stop();
  ctx.rss.ingress = Math.max(ctx.rss.ingress ?? 0, peaks.get(ingress.pid) ?? 0);
  ctx.rss.dispatcher = Math.max(ctx.rss.dispatcher ?? 0, peaks.get(dispatcher.pid) ?? 0);
  ctx.idleRss.ingress = ingress.idleRssBytes;
  ctx.idleRss.dispatcher = dispatcher.idleRssBytes;
  await sleep(500);
  const { received, summary: e2e } = await path.takeLatencies();
  const answer = summarize(fixed.latencies);
  const problems = [
    fixed.failed > 0 && `${fixed.failed} POSTs failed (${describeFailures(fixed.failures)})`,
    fixed.skipped > 0 && `${fixed.skipped} POSTs not sent when due (${MAX_IN_FLIGHT} in flight)`,
    !drained && 'the queue did not drain within 30 s after the load',
    received < fixed.ok && `${fixed.ok - received} accepted updates not received`,
  ].filter(Boolean);
  const note = problems.length ? problems.join('; ') : undefined;
  ctx.rows.push(
    row({
      section: SECTION,
      name: P50_ROW.name,
      unit: 'ms',
      value: e2e.p50,
      target: P50_ROW.target,
      note,
    }),
    row({
      section: SECTION,
      name: P99_ROW.name,
      unit: 'ms',
      value: e2e.p99,
      target: P99_ROW.target,
    }),
    row({ section: SECTION, name: 'max POST to receipt', unit: 'ms', value: e2e.max }),
    row({
      section: SECTION,
      name: 'p99 webhook answer',
      unit: 'ms',
      value: answer.p99,
    }),
  );
  ctx.rows.push(...workRows(ctx, RATE, fixedWork, used, fixed.ok, path.pids));
  return {
    rate: RATE,
    seconds: fixedSec,
    sent: fixed.sent,
    accepted: fixed.ok,
    failed: fixed.failed,
    skipped: fixed.skipped,
    received,
    postToReceiptMs: e2e,
    webhookAnswerMs: answer,
    redisPerUpdate: fixedWork,
  };
}

/** Rising rates, each a step of `stepSec`, until one is not sustained; then the sustainable rate's row. */
async function rampUp(ctx: BenchContext, path: RunningPath, stepSec: number): Promise<RampStep[]> {
  const steps: RampStep[] = [];
  for (const rate of RAMP) {
    if (!(await path.drain(20_000))) {
      ctx.log('e2e: ramp stopped: the queue did not drain between steps');
      break;
    }
    const step = await rampStep(ctx, path, rate, stepSec);
    steps.push(step);
    if (!step.sustainable) break;
  }
  const sustainable = sustainableRate(steps);
  const failedStep = steps.find((s) => !s.sustainable);
  ctx.rows.push(
    row({
      section: SECTION,
      name: RAMP_ROW.name,
      unit: 'updates/s',
      value: sustainable,
      target: RAMP_ROW.target,
      note: failedStep ? `${failedStep.rate}/s: ${failedStep.reasons.join(', ')}` : undefined,
    }),
  );
  return steps;
}

/** One step of the ramp, judged from the queue depth sampled every 250 ms while it runs. */
async function rampStep(
  ctx: BenchContext,
  path: RunningPath,
  rate: number,
  stepSec: number,
): Promise<RampStep> {
  ctx.log(`e2e: ramp ${rate}/s for ${stepSec} s`);
  const samples: DepthSample[] = [];
  const stepStart = Date.now();
  const stepStats = await path.commandStats();
  const sampler = setInterval(() => {
    void path.depth().then(
      (d) => samples.push({ t: Date.now() - stepStart, depth: d }),
      () => undefined,
    );
  }, 250);
  const result = await path.send(rate, stepSec);
  clearInterval(sampler);
  samples.push({ t: Date.now() - stepStart, depth: await path.depth() });
  const judged = judgeStep({
    rate,
    durationMs: result.durationMs,
    accepted: result.ok,
    failed: result.failed + result.skipped,
    depth: samples,
  });
  if (result.failed) judged.reasons.push(`failures: ${describeFailures(result.failures)}`);
  const work = redisWork(commandDelta(stepStats, await path.commandStats()), result.ok);
  ctx.log(
    `e2e: ${rate}/s: ${judged.sustainable ? 'sustained' : `not sustained (${judged.reasons.join(', ')})`}; Redis ${work.scripts?.toFixed(2)} scripts, ${work.commands?.toFixed(1)} commands per update (queue not drained within the step: partial)`,
  );
  return {
    ...judged,
    rate,
    redisScriptsPerUpdate: work.scripts,
    redisCommandsPerUpdate: work.commands,
  };
}

/** Redis work per accepted update over a step (the shared Redis counts other clients too). */
function redisWork(delta: CommandDelta, accepted: number) {
  return {
    scripts: accepted ? delta.scripts / accepted : undefined,
    commands: accepted ? delta.commands / accepted : undefined,
    top: delta.top,
  };
}

/**
 * Redis scripts and commands per accepted update (from INFO commandstats around the
 * step, drain included) and CPU per update of each process, at one rate.
 */
function workRows(
  ctx: BenchContext,
  rate: number,
  work: { scripts?: number; commands?: number },
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

function describeFailures(failures: Record<string, number>): string {
  return Object.entries(failures)
    .map(([what, n]) => `${n} x ${what}`)
    .join(', ');
}

function missAll(ctx: BenchContext, reason: string): void {
  ctx.rows.push(...[P50_ROW, P99_ROW, RAMP_ROW].map((spec) => failedRow(spec, reason)));
}
