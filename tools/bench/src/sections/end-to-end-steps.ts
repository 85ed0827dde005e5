import { withRedisPid } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { OpenLoopResult } from '../harness/load-spec';
import { CpuWindow, RssSampler, scrapeHeap, type HeapStats } from '../harness/proc-stats';
import { commandDelta, type CommandDelta } from '../stats/command-stats';
import type { LatencySummary } from '../stats/percentiles';
import {
  judgeStep,
  nextRampRate,
  rampFromSustainable,
  type DepthSample,
  type StepJudgement,
} from '../stats/ramp';
import { MAX_IN_FLIGHT, summarize, type RunningPath } from './end-to-end-path';

export const SECTION = '3 end to end';
/** The issue's rate: its p50 and p99 targets, and the delivery log's on/off comparison. */
export const RATE = 2000;
export const RAMP = [1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000];

export type RampStep = StepJudgement & {
  rate: number;
  redisScriptsPerUpdate?: number;
  redisCommandsPerUpdate?: number;
};

export interface RedisWork {
  scripts?: number;
  commands?: number;
  top: CommandDelta['top'];
}

/** One fixed rate through the path, drained, with what each process spent on it. */
export interface AtRate {
  pids: { ingress: number; dispatcher: number };
  rate: number;
  seconds: number;
  result: OpenLoopResult;
  drained: boolean;
  received: number;
  postToReceipt: LatencySummary;
  webhookAnswer: LatencySummary;
  work: RedisWork;
  /** CPU µs of the ingress, the dispatcher and Redis (when on this machine), by pid. */
  used: Map<number, number | undefined>;
  /** Peak RSS by pid, sampled while the load ran. */
  peaks: Map<number, number>;
  heap: { ingress: HeapStats; dispatcher: HeapStats };
  /** What went wrong, for the p50 row's note; undefined when nothing did. */
  problems?: string;
}

/** JIT, connection pools, lanes; the reason the path is unusable when no POST was accepted. */
export async function warmUp(ctx: BenchContext, path: RunningPath): Promise<string | undefined> {
  ctx.log('e2e: warming up (3 s at 1000/s)');
  const warm = await path.send(1000, 3);
  if (warm.ok === 0) {
    ctx.log(path.ingress.logTail());
    return `no webhook POST was accepted during warm-up (${warm.failed} failed)`;
  }
  await path.drain(30_000);
  await sleep(500);
  await path.receiver.call('reset');
  return undefined;
}

/** `rate` updates a second for `seconds`, then the drain: latency, CPU, RSS and Redis work. */
export async function runAtRate(
  ctx: BenchContext,
  path: RunningPath,
  rate: number,
  seconds: number,
): Promise<AtRate> {
  const { ingress, dispatcher } = path;
  ctx.log(`e2e: ${rate}/s for ${seconds} s`);
  const rss = new RssSampler([ingress.pid, dispatcher.pid]).start();
  const cpu = new CpuWindow(withRedisPid(ctx, [ingress.pid, dispatcher.pid])).start();
  const statsBefore = await path.commandStats();
  const result = await path.send(rate, seconds);
  const heap = {
    ingress: await scrapeHeap(ingress.adminUrl),
    dispatcher: await scrapeHeap(dispatcher.adminUrl),
  };
  const drained = await path.drain(30_000);
  const used = cpu.stop();
  const work = redisWork(commandDelta(statsBefore, await path.commandStats()), result.ok);
  const peaks = rss.stop();
  await sleep(500);
  const { received, summary: postToReceipt } = await path.takeLatencies();
  const problems = [
    result.failed > 0 && `${result.failed} POSTs failed (${describeFailures(result.failures)})`,
    result.skipped > 0 && `${result.skipped} POSTs not sent when due (${MAX_IN_FLIGHT} in flight)`,
    !drained && 'the queue did not drain within 30 s after the load',
    received < result.ok && `${result.ok - received} accepted updates not received`,
  ].filter(Boolean);
  return {
    pids: path.pids,
    rate,
    seconds,
    result,
    drained,
    received,
    postToReceipt,
    webhookAnswer: summarize(result.latencies),
    work,
    used,
    peaks,
    heap,
    problems: problems.length ? problems.join('; ') : undefined,
  };
}

/** What the results file keeps of a fixed-rate run. */
export function atRateDetails(fixed: AtRate) {
  return {
    rate: fixed.rate,
    seconds: fixed.seconds,
    sent: fixed.result.sent,
    accepted: fixed.result.ok,
    failed: fixed.result.failed,
    skipped: fixed.result.skipped,
    received: fixed.received,
    postToReceiptMs: fixed.postToReceipt,
    webhookAnswerMs: fixed.webhookAnswer,
    redisPerUpdate: fixed.work,
  };
}

/** CPU µs per accepted update of one process of a run, when it was measured. */
export function cpuPerUpdate(run: AtRate, pid: number | undefined): number | undefined {
  const micros = pid === undefined ? undefined : run.used.get(pid);
  return micros === undefined || run.result.ok === 0 ? undefined : micros / run.result.ok;
}

export interface Ramp {
  steps: RampStep[];
  sustainable: number;
  failedStep?: RampStep;
}

/**
 * Rising rates of `stepSec` each, from `from` (see nextRampRate: the lowest rate for
 * the plain ramp), until the sustainable rate is known.
 */
export async function rampUp(
  ctx: BenchContext,
  path: RunningPath,
  stepSec: number,
  from: number = RAMP[0],
): Promise<Ramp> {
  const steps: RampStep[] = [];
  for (let rate = nextRampRate(RAMP, from, steps); rate !== undefined;) {
    if (!(await path.drain(20_000))) {
      ctx.log('e2e: ramp stopped: the queue did not drain between steps');
      break;
    }
    steps.push(await rampStep(ctx, path, rate, stepSec));
    rate = nextRampRate(RAMP, from, steps);
  }
  return {
    steps,
    sustainable: rampFromSustainable(steps),
    failedStep: steps.find((s) => !s.sustainable),
  };
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
export function redisWork(delta: CommandDelta, accepted: number): RedisWork {
  return {
    scripts: accepted ? delta.scripts / accepted : undefined,
    commands: accepted ? delta.commands / accepted : undefined,
    top: delta.top,
  };
}

function describeFailures(failures: Record<string, number>): string {
  return Object.entries(failures)
    .map(([what, n]) => `${n} x ${what}`)
    .join(', ');
}
