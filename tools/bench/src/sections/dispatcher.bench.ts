import { Queue } from 'bullmq';
import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot, withRedisPid } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import { CpuWindow } from '../harness/proc-stats';
import { pausedDeliveryQueue, prefillJobs, prefillLanes } from '../harness/prefill';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, profileArgs, type AppProcess } from '../harness/relaygram-install';
import { BENCH_CHATS, type UpdateStream } from '../harness/update-factory';
import { failedRow, firstLine, row } from '../report/results';

const SECTION = '2 dispatcher';
const ROUTE = 'deliveries';
const CONCURRENCY = 50;

type Case =
  | { name: string; kind: 'relaygram'; ordering: 'none' | 'chat' | 'strict' }
  | { name: string; kind: 'b2'; concurrency: number };

/** Interleaved so that each Relaygram ordering runs right after or before its baseline. */
const CASES: Case[] = [
  { name: 'B2-50', kind: 'b2', concurrency: CONCURRENCY },
  { name: 'none', kind: 'relaygram', ordering: 'none' },
  { name: 'chat', kind: 'relaygram', ordering: 'chat' },
  { name: 'B2-1', kind: 'b2', concurrency: 1 },
  { name: 'strict', kind: 'relaygram', ordering: 'strict' },
];

interface Tally {
  delivered: number;
  seconds: number;
  cpuMicros: number;
  redisCpuMicros: number;
  failure?: string;
}

interface Drained {
  count: number;
  firstAt?: number;
  lastAt?: number;
  timedOut: boolean;
}

/** The consumer of one case, started on its paused, prefilled queue. */
interface Consumer {
  queue: Queue;
  pid: number;
  app?: AppProcess;
  close(): Promise<void>;
}

/**
 * Section 2: deliveries already queued (the dispatcher or worker starts on a paused
 * queue, and the clock starts when it is resumed), drained to a receiver answering
 * 204. The rate is counted at the receiver, first arrival to last.
 */
export async function dispatcherBench(ctx: BenchContext): Promise<void> {
  const tallies = new Map<string, Tally>(
    CASES.map((c) => [c.name, { delivered: 0, seconds: 0, cpuMicros: 0, redisCpuMicros: 0 }]),
  );
  const receiver = await BenchChild.start('receiver');
  try {
    const { url: receiverUrl } = await receiver.call<{ url: string }>('start', { mode: 'count' });
    await runRounds(ctx, tallies, receiver, `${receiverUrl}/hook`);
  } finally {
    await receiver.stop();
  }
  reportRows(ctx, tallies);
}

/** Every case, round by round, in the opposite order each round; a case that failed is not run again. */
async function runRounds(
  ctx: BenchContext,
  tallies: Map<string, Tally>,
  receiver: BenchChild,
  target: string,
): Promise<void> {
  const { quick } = ctx.options;
  const total = quick ? 10_000 : 20_000;
  const rounds = quick ? 1 : 2;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? CASES : [...CASES].reverse();
    for (const c of order) {
      const tally = tallies.get(c.name)!;
      if (tally.failure) continue;
      const prefix = `${ctx.runPrefix}-d-${c.name.toLowerCase()}-${round}`;
      ctx.log(`dispatcher: round ${round + 1}/${rounds}, ${c.name}, ${total} deliveries`);
      try {
        await runCase(ctx, c, prefix, total, receiver, target, tally);
      } catch (error) {
        tally.failure = firstLine(error);
        ctx.log(`dispatcher: ${c.name} failed: ${tally.failure}`);
      } finally {
        await deleteKeys(ctx.redis.client, prefix);
      }
    }
  }
}

const rate = (t: Tally) => (t.seconds > 0 && !t.failure ? t.delivered / t.seconds : undefined);
const perDelivery = (micros: number, t: Tally) =>
  t.delivered > 0 && !t.failure ? micros / t.delivered : undefined;

function reportRows(ctx: BenchContext, tallies: Map<string, Tally>): void {
  const compare = (name: string, label: string, base: string, min: number) => {
    const t = tallies.get(name)!;
    const b = tallies.get(base)!;
    const note = [t.failure, b.failure && `${base}: ${b.failure}`].filter(Boolean).join('; ');
    const target = { kind: 'ratio-at-least', min } as const;
    if (t.failure) {
      ctx.rows.push(failedRow({ section: SECTION, name: label, unit: '/s', target }, note));
      return;
    }
    ctx.rows.push(
      row({
        section: SECTION,
        name: label,
        unit: '/s',
        value: rate(t),
        baseline: rate(b),
        baselineName: base,
        target,
        note: note || undefined,
      }),
    );
  };
  compare('none', `none, concurrency ${CONCURRENCY}`, 'B2-50', 1.0);
  compare('chat', `chat, ${BENCH_CHATS.toLocaleString('en-US')} chats`, 'B2-50', 1.0);
  compare('strict', 'strict, one lane', 'B2-1', 0.9);
  for (const [name, base] of [
    ['none', 'B2-50'],
    ['chat', 'B2-50'],
    ['strict', 'B2-1'],
  ] as const) {
    const t = tallies.get(name)!;
    const b = tallies.get(base)!;
    ctx.rows.push(
      row({
        section: SECTION,
        name: `${name}: CPU per delivery`,
        unit: 'µs',
        value: perDelivery(t.cpuMicros, t),
        baseline: perDelivery(b.cpuMicros, b),
        baselineName: base,
      }),
    );
  }
  ctx.details.dispatcher = Object.fromEntries(
    [...tallies].map(([name, t]) => [
      name,
      {
        ...t,
        rate: rate(t),
        cpuMicrosPerDelivery: perDelivery(t.cpuMicros, t),
        redisCpuMicrosPerDelivery: perDelivery(t.redisCpuMicros, t),
      },
    ]),
  );
}

async function runCase(
  ctx: BenchContext,
  c: Case,
  prefix: string,
  total: number,
  receiver: BenchChild,
  target: string,
  tally: Tally,
): Promise<void> {
  const stream: UpdateStream = { firstId: 1, chats: BENCH_CHATS };
  let consumer: Consumer | undefined;
  try {
    consumer =
      c.kind === 'relaygram'
        ? await startDispatcher(ctx, c, prefix, total, stream, target)
        : await startB2Worker(ctx, c, prefix, total, stream, target);
    await drainInto(ctx, c, consumer, total, receiver, tally);
  } finally {
    await consumer?.close();
  }
}

/** The dispatcher app on a paused delivery queue already holding `total` deliveries in lanes. */
async function startDispatcher(
  ctx: BenchContext,
  c: Extract<Case, { kind: 'relaygram' }>,
  prefix: string,
  total: number,
  stream: UpdateStream,
  target: string,
): Promise<Consumer> {
  const client = ctx.redis.client;
  const queue = await pausedDeliveryQueue(client, prefix, ROUTE);
  let install: RelaygramInstall | undefined;
  const close = async () => {
    await queue.close();
    await install?.close();
  };
  try {
    await prefillLanes(client, prefix, {
      bot: BOT,
      route: ROUTE,
      ordering: c.ordering,
      stream,
      count: total,
    });
    install = new RelaygramInstall(prefix, ctx.redis.url, ctx.emulator.apiRoot, benchBot(ctx), [
      { name: ROUTE, targetUrl: target, ordering: c.ordering, concurrency: CONCURRENCY },
    ]);
    const app = await install.start('dispatcher', ctx.options.launch, `dispatcher-${c.name}`);
    return { queue, pid: app.pid, app, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** B2, a bare BullMQ worker, on a paused queue already holding `total` jobs. */
async function startB2Worker(
  ctx: BenchContext,
  c: Extract<Case, { kind: 'b2' }>,
  prefix: string,
  total: number,
  stream: UpdateStream,
  target: string,
): Promise<Consumer> {
  const queue = new Queue('b2', {
    connection: ctx.redis.client,
    prefix: `${prefix}:bull`,
    skipVersionCheck: true,
  });
  queue.on('error', () => undefined);
  let worker: BenchChild | undefined;
  const close = async () => {
    await queue.close();
    await worker?.stop();
  };
  try {
    await queue.pause();
    await prefillJobs(queue, stream, total);
    worker = await BenchChild.start('b2-worker', {
      name: c.name,
      nodeArgs: profileArgs(ctx.options.launch, c.name),
    });
    await worker.call('start', {
      redisUrl: ctx.redis.url,
      prefix: `${prefix}:bull`,
      queue: 'b2',
      concurrency: c.concurrency,
      target,
    });
    return { queue, pid: worker.pid, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Resumes the queue and counts, at the receiver, the deliveries from first arrival to last. */
async function drainInto(
  ctx: BenchContext,
  c: Case,
  consumer: Consumer,
  total: number,
  receiver: BenchChild,
  tally: Tally,
): Promise<void> {
  await receiver.call('reset');
  const drained = receiver.call<Drained>('expect', {
    count: total,
    timeoutMs: 300_000,
    stallMs: 15_000,
  });
  const cpu = new CpuWindow(withRedisPid(ctx, [consumer.pid])).start();
  await consumer.queue.resume();
  const result = await drained;
  const used = cpu.stop();
  if (result.timedOut) {
    if (consumer.app) ctx.log(`dispatcher log:\n${consumer.app.logTail(10)}`);
    throw new Error(`${result.count} of ${total} deliveries arrived, then nothing for 15 s`);
  }
  const seconds = ((result.lastAt ?? 0) - (result.firstAt ?? 0)) / 1000;
  tally.delivered += result.count - 1;
  tally.seconds += seconds;
  tally.cpuMicros += used.get(consumer.pid) ?? Number.NaN;
  if (ctx.redis.pid) tally.redisCpuMicros += used.get(ctx.redis.pid) ?? Number.NaN;
  ctx.log(`dispatcher: ${c.name}: ${Math.round((result.count - 1) / seconds)} deliveries/s`);
}
