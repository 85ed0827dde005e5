import { withRedisPid } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { OpenLoopResult } from '../harness/load-spec';
import { CpuWindow, RssSampler, scrapeHeap, type HeapStats } from '../harness/proc-stats';
import { commandDelta, type CommandDelta } from '../stats/command-stats';
import type { LatencySummary } from '../stats/percentiles';
import { judgeStep, sustainableRate, type DepthSample, type StepJudgement } from '../stats/ramp';
import { MAX_IN_FLIGHT, summarize, type RampPath, type RunningPath } from './end-to-end-path';

export const SECTION = '3 end to end';
/** The issue's rate: its p50 and p99 targets. */
export const RATE = 2000;
/**
 * A rate the box handles with CPU to spare: the path's latency without queueing, and
 * where the delivery log's cost to p99 is judged (past the box's sustainable rate a
 * p99 measures how fast the backlog grows, and any cost multiplies).
 */
export const LIGHT_RATE = 1000;
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
  /** At the end of the load of the last round. */
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

/**
 * `rate` updates a second for `seconds` on each path, in rounds of half that, in the
 * order A B B A (one path: two rounds), each round drained before the next: the paths
 * share the box's slow and fast minutes alike. One result per path.
 */
export async function runInterleaved(
  ctx: BenchContext,
  paths: readonly RunningPath[],
  rate: number,
  seconds: number,
): Promise<AtRate[]> {
  const rounds = paths.map(() => [] as Round[]);
  const order = [...paths.keys(), ...[...paths.keys()].reverse()];
  for (const i of order) rounds[i].push(await runRound(ctx, paths[i], rate, seconds / 2));
  return rounds.map((r, i) => mergeRounds(paths[i].pids, rate, r));
}

export interface Round {
  seconds: number;
  result: OpenLoopResult;
  drained: boolean;
  received: number;
  receipts: Float64Array;
  delta: CommandDelta;
  used: Map<number, number | undefined>;
  peaks: Map<number, number>;
  heap: AtRate['heap'];
}

/** One round: the load, the drain, and the latencies, CPU, RSS and Redis commands of both. */
async function runRound(
  ctx: BenchContext,
  path: RunningPath,
  rate: number,
  seconds: number,
): Promise<Round> {
  const { ingress, dispatcher } = path;
  ctx.log(`e2e: ${path.label}: ${rate}/s for ${seconds} s`);
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
  const delta = commandDelta(statsBefore, await path.commandStats());
  const peaks = rss.stop();
  await sleep(500);
  const { received, latencies: receipts } = await path.takeLatencySamples();
  return { seconds, result, drained, received, receipts, delta, used, peaks, heap };
}

/** Rounds of one path as one run: counts and CPU added, peaks the highest, percentiles of all. */
export function mergeRounds(pids: AtRate['pids'], rate: number, rounds: readonly Round[]): AtRate {
  const sum = (f: (r: Round) => number) => rounds.reduce((n, r) => n + f(r), 0);
  const failures: Record<string, number> = {};
  const used = new Map<number, number | undefined>();
  const peaks = new Map<number, number>();
  for (const r of rounds) {
    for (const [what, n] of Object.entries(r.result.failures))
      failures[what] = (failures[what] ?? 0) + n;
    for (const [pid, micros] of r.used) {
      const before = used.has(pid) ? used.get(pid) : 0;
      used.set(pid, before === undefined || micros === undefined ? undefined : before + micros);
    }
    for (const [pid, peak] of r.peaks) peaks.set(pid, Math.max(peak, peaks.get(pid) ?? 0));
  }
  const answers = rounds.map((r) => r.result.latencies);
  const result: OpenLoopResult = {
    sent: sum((r) => r.result.sent),
    ok: sum((r) => r.result.ok),
    failed: sum((r) => r.result.failed),
    skipped: sum((r) => r.result.skipped),
    failures,
    durationMs: sum((r) => r.result.durationMs),
    latencies: Float64Array.from(answers.flatMap((a) => Array.from(a))),
    idsUsed: sum((r) => r.result.idsUsed),
  };
  const delta = {
    commands: sum((r) => r.delta.commands),
    scripts: sum((r) => r.delta.scripts),
    top: rounds[rounds.length - 1].delta.top,
  };
  const drained = rounds.every((r) => r.drained);
  const received = sum((r) => r.received);
  const problems = [
    result.failed > 0 && `${result.failed} POSTs failed (${describeFailures(failures)})`,
    result.skipped > 0 && `${result.skipped} POSTs not sent when due (${MAX_IN_FLIGHT} in flight)`,
    !drained && 'the queue did not drain within 30 s after the load',
    received < result.ok && `${result.ok - received} accepted updates not received`,
  ].filter(Boolean);
  return {
    pids,
    rate,
    seconds: sum((r) => r.seconds),
    result,
    drained,
    received,
    postToReceipt: summarize(...rounds.map((r) => r.receipts)),
    webhookAnswer: summarize(...answers),
    work: redisWork(delta, result.ok),
    used,
    peaks,
    heap: rounds[rounds.length - 1].heap,
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
 * Rising rates of `stepSec` each on every path, the paths one after the other at each
 * rate (in turns: the first path first at the first rate, last at the next); a path
 * stops at its first step not sustained. One ramp per path.
 */
export async function rampUp(
  ctx: BenchContext,
  paths: readonly RampPath[],
  stepSec: number,
): Promise<Ramp[]> {
  const steps = paths.map(() => [] as RampStep[]);
  const going = paths.map(() => true);
  for (const [n, rate] of RAMP.entries()) {
    const order = n % 2 === 0 ? [...paths.keys()] : [...paths.keys()].reverse();
    for (const i of order.filter((i) => going[i])) {
      if (!(await paths[i].drain(20_000))) {
        ctx.log(`e2e: ${paths[i].label}: ramp stopped: the queue did not drain between steps`);
        going[i] = false;
        continue;
      }
      const step = await rampStep(ctx, paths[i], rate, stepSec);
      steps[i].push(step);
      going[i] = step.sustainable;
    }
    if (!going.some(Boolean)) break;
  }
  return steps.map((s) => ({
    steps: s,
    sustainable: sustainableRate(s),
    failedStep: s.find((step) => !step.sustainable),
  }));
}

/** One step of the ramp, judged from the queue depth sampled every 250 ms while it runs. */
async function rampStep(
  ctx: BenchContext,
  path: RampPath,
  rate: number,
  stepSec: number,
): Promise<RampStep> {
  ctx.log(`e2e: ${path.label}: ramp ${rate}/s for ${stepSec} s`);
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
    `e2e: ${path.label}: ${rate}/s: ${judged.sustainable ? 'sustained' : `not sustained (${judged.reasons.join(', ')})`}; Redis ${work.scripts?.toFixed(2)} scripts, ${work.commands?.toFixed(1)} commands per update (queue not drained within the step: partial)`,
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
