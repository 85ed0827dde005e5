import { BenchChild } from '../harness/bench-child';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { OpenLoopResult, OpenLoopSpec } from '../harness/load-spec';
import { CpuWindow, RssSampler, scrapeHeap } from '../harness/proc-stats';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, secret, type AppProcess } from '../harness/relaygram-install';
import type { UpdateStream } from '../harness/update-factory';
import { failedRow, row } from '../report/results';
import { Samples } from '../stats/percentiles';
import { commandDelta, parseCommandStats, type CommandDelta } from '../stats/command-stats';
import { judgeStep, sustainableRate, type DepthSample, type StepJudgement } from '../stats/ramp';
import { firstLine } from './ingress.bench';

const SECTION = '3 end to end';
const BOT = 'bench-bot';
const ROUTE = 'e2e';
const RATE = 2000;
/** A rate the box handles with CPU to spare: the path's latency without queueing. */
const LIGHT_RATE = 1000;
const CHATS = 1000;
/** Telegram opens at most 100 connections to a webhook (max_connections). */
const MAX_IN_FLIGHT = 100;
const RAMP = [1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000];

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
  const fixedSec = quick ? 30 : 60;
  const lightSec = quick ? 10 : 20;
  const stepSec = quick ? 3 : 10;
  const prefix = `${ctx.runPrefix}-e2e`;
  const webhookSecret = secret();
  const stream: UpdateStream = { firstId: 1, chats: CHATS };
  const children: BenchChild[] = [];
  let install: RelaygramInstall | undefined;
  try {
    const receiver = await BenchChild.start('receiver');
    children.push(receiver);
    const { url: receiverUrl } = await receiver.call<{ url: string }>('start', { mode: 'latency' });
    install = new RelaygramInstall(
      prefix,
      ctx.redis.url,
      ctx.emulator.apiRoot,
      {
        id: BOT,
        token: ctx.emulator.bot.token,
        username: ctx.emulator.bot.username,
        webhookSecret,
      },
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
    const depthKey = `${prefix}:bot-stats:${BOT}`;
    const depth = async () => Number((await ctx.redis.client.hget(depthKey, 'queued')) ?? 0);
    let nextId = stream.firstId;
    const spec = (rate: number, durationSec: number): OpenLoopSpec => ({
      url: `${ingress.url}/webhooks/telegram/${BOT}`,
      headers: { 'x-telegram-bot-api-secret-token': webhookSecret },
      stream,
      firstId: nextId,
      rate,
      durationSec,
      maxInFlight: MAX_IN_FLIGHT,
    });
    const commandStats = async () => parseCommandStats(await ctx.redis.client.info('commandstats'));
    /** Redis work per accepted update over a step (the shared Redis counts other clients too). */
    const redisWork = (delta: CommandDelta, accepted: number) => ({
      scripts: accepted ? delta.scripts / accepted : undefined,
      commands: accepted ? delta.commands / accepted : undefined,
      top: delta.top,
    });
    const drain = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while ((await depth()) > 0) {
        if (Date.now() > deadline) return false;
        await sleep(100);
      }
      return true;
    };

    // Warm-up: JIT, connection pools, lanes.
    ctx.log('e2e: warming up (3 s at 1000/s)');
    const warm = await generator.call<OpenLoopResult>('run', spec(1000, 3));
    nextId += warm.idsUsed;
    if (warm.ok === 0) {
      missAll(ctx, `no webhook POST was accepted during warm-up (${warm.failed} failed)`);
      ctx.log(ingress.logTail());
      return;
    }
    await drain(30_000);
    await sleep(500);
    await receiver.call('reset');

    ctx.log(`e2e: ${LIGHT_RATE}/s for ${lightSec} s`);
    const lightPids = [ingress.pid, dispatcher.pid, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
    const lightCpu = new CpuWindow(lightPids).start();
    const lightStatsBefore = await commandStats();
    const light = await generator.call<OpenLoopResult>('run', spec(LIGHT_RATE, lightSec));
    nextId += light.idsUsed;
    await drain(30_000);
    const lightUsed = lightCpu.stop();
    const lightWork = redisWork(commandDelta(lightStatsBefore, await commandStats()), light.ok);
    await sleep(500);
    const lightTaken = await receiver.call<{ latencies: Float64Array }>('takeLatencies');
    const lightLat = new Samples(lightTaken.latencies.length);
    lightLat.addAll(lightTaken.latencies);
    const lightE2e = lightLat.summary();
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
      ...workRows(ctx, LIGHT_RATE, lightWork, lightUsed, light.ok, {
        ingress: ingress.pid,
        dispatcher: dispatcher.pid,
      }),
    );
    await receiver.call('reset');

    ctx.log(`e2e: ${RATE}/s for ${fixedSec} s`);
    const rss = new RssSampler([ingress.pid, dispatcher.pid]).start();
    const pids = [ingress.pid, dispatcher.pid, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
    const cpu = new CpuWindow(pids).start();
    const fixedStatsBefore = await commandStats();
    const fixed = await generator.call<OpenLoopResult>('run', spec(RATE, fixedSec));
    nextId += fixed.idsUsed;
    ctx.heap.ingress = await scrapeHeap(ingress.adminUrl);
    ctx.heap.dispatcher = await scrapeHeap(dispatcher.adminUrl);
    const drained = await drain(30_000);
    const used = cpu.stop();
    const fixedWork = redisWork(commandDelta(fixedStatsBefore, await commandStats()), fixed.ok);
    const peaks = rss.stop();
    ctx.rss.ingress = Math.max(ctx.rss.ingress ?? 0, peaks.get(ingress.pid) ?? 0);
    ctx.rss.dispatcher = Math.max(ctx.rss.dispatcher ?? 0, peaks.get(dispatcher.pid) ?? 0);
    ctx.idleRss.ingress = ingress.idleRssBytes;
    ctx.idleRss.dispatcher = dispatcher.idleRssBytes;
    await sleep(500);
    const { received, latencies } = await receiver.call<{
      received: number;
      latencies: Float64Array;
    }>('takeLatencies');
    const lat = new Samples(latencies.length);
    lat.addAll(latencies);
    const e2e = lat.summary();
    const answer = new Samples(fixed.latencies.length);
    answer.addAll(fixed.latencies);
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
        name: `p50 POST to receipt (${RATE}/s)`,
        unit: 'ms',
        value: e2e.p50,
        target: { kind: 'at-most', max: 5, unit: 'ms' },
        note,
      }),
      row({
        section: SECTION,
        name: `p99 POST to receipt (${RATE}/s)`,
        unit: 'ms',
        value: e2e.p99,
        target: { kind: 'at-most', max: 50, unit: 'ms' },
      }),
      row({ section: SECTION, name: 'max POST to receipt', unit: 'ms', value: e2e.max }),
      row({
        section: SECTION,
        name: 'p99 webhook answer',
        unit: 'ms',
        value: answer.summary().p99,
      }),
    );
    ctx.rows.push(
      ...workRows(ctx, RATE, fixedWork, used, fixed.ok, {
        ingress: ingress.pid,
        dispatcher: dispatcher.pid,
      }),
    );

    const steps: (StepJudgement & {
      rate: number;
      redisScriptsPerUpdate?: number;
      redisCommandsPerUpdate?: number;
    })[] = [];
    for (const rate of RAMP) {
      if (!(await drain(20_000))) {
        ctx.log('e2e: ramp stopped: the queue did not drain between steps');
        break;
      }
      ctx.log(`e2e: ramp ${rate}/s for ${stepSec} s`);
      const samples: DepthSample[] = [];
      const stepStart = Date.now();
      const stepStats = await commandStats();
      const sampler = setInterval(() => {
        void depth().then(
          (d) => samples.push({ t: Date.now() - stepStart, depth: d }),
          () => undefined,
        );
      }, 250);
      const result = await generator.call<OpenLoopResult>('run', spec(rate, stepSec));
      clearInterval(sampler);
      samples.push({ t: Date.now() - stepStart, depth: await depth() });
      nextId += result.idsUsed;
      const judged = judgeStep({
        rate,
        durationMs: result.durationMs,
        accepted: result.ok,
        failed: result.failed + result.skipped,
        depth: samples,
      });
      if (result.failed) judged.reasons.push(`failures: ${describeFailures(result.failures)}`);
      const work = redisWork(commandDelta(stepStats, await commandStats()), result.ok);
      steps.push({
        ...judged,
        rate,
        redisScriptsPerUpdate: work.scripts,
        redisCommandsPerUpdate: work.commands,
      });
      ctx.log(
        `e2e: ${rate}/s: ${judged.sustainable ? 'sustained' : `not sustained (${judged.reasons.join(', ')})`}; Redis ${work.scripts?.toFixed(2)} scripts, ${work.commands?.toFixed(1)} commands per update (queue not drained within the step: partial)`,
      );
      if (!judged.sustainable) break;
    }
    const sustainable = sustainableRate(steps);
    const failedStep = steps.find((s) => !s.sustainable);
    ctx.rows.push(
      row({
        section: SECTION,
        name: 'sustainable rate (ramp)',
        unit: 'updates/s',
        value: sustainable,
        target: { kind: 'at-least', min: 4000, unit: 'updates/s' },
        note: failedStep ? `${failedStep.rate}/s: ${failedStep.reasons.join(', ')}` : undefined,
      }),
    );
    ctx.details.endToEnd = {
      light: {
        rate: LIGHT_RATE,
        seconds: lightSec,
        accepted: light.ok,
        failed: light.failed,
        skipped: light.skipped,
        postToReceiptMs: lightE2e,
        redisPerUpdate: lightWork,
      },
      fixed: {
        rate: RATE,
        seconds: fixedSec,
        sent: fixed.sent,
        accepted: fixed.ok,
        failed: fixed.failed,
        skipped: fixed.skipped,
        received,
        postToReceiptMs: e2e,
        webhookAnswerMs: answer.summary(),
        redisPerUpdate: fixedWork,
      },
      ramp: steps,
      peakRssBytes: { ingress: ctx.rss.ingress, dispatcher: ctx.rss.dispatcher },
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
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
  const shared =
    ctx.redis.source === 'private redis-server'
      ? undefined
      : 'shared Redis: includes other clients';
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
  ctx.rows.push(
    failedRow(
      {
        section: SECTION,
        name: `p50 POST to receipt (${RATE}/s)`,
        unit: 'ms',
        target: { kind: 'at-most', max: 5, unit: 'ms' },
      },
      reason,
    ),
    failedRow(
      {
        section: SECTION,
        name: `p99 POST to receipt (${RATE}/s)`,
        unit: 'ms',
        target: { kind: 'at-most', max: 50, unit: 'ms' },
      },
      reason,
    ),
    failedRow(
      {
        section: SECTION,
        name: 'sustainable rate (ramp)',
        unit: 'updates/s',
        target: { kind: 'at-least', min: 4000, unit: 'updates/s' },
      },
      reason,
    ),
  );
}
