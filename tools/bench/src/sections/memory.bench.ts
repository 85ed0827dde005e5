import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { LoadResult } from '../harness/load-spec';
import { describeHeap } from '../harness/proc-stats';
import { privateRedis, type RedisTarget } from '../harness/redis-target';
import { RelaygramInstall, secret } from '../harness/relaygram-install';
import { updateJson, type UpdateStream } from '../harness/update-factory';
import { failedRow, firstLine, row } from '../report/results';
import { usedMemory, weighDeliveryLog } from './delivery-log-memory';

const SECTION = '5 memory';
const ROUTE = 'stored';
const MB = 2 ** 20;
const RSS_LIMIT_MB = 150;

/**
 * Section 5: the peak RSS of each app under load (sampled by sections 3 and 4), and
 * what a queued delivery costs in Redis: updates POSTed to the ingress app with no
 * dispatcher running, on a private redis-server so that INFO memory counts nothing
 * but them; then what the delivery log keeps of them once a dispatcher delivered them.
 */
export async function memoryBench(ctx: BenchContext): Promise<void> {
  const rssTarget = { kind: 'at-most', max: RSS_LIMIT_MB, unit: 'MB' } as const;
  for (const app of ['ingress', 'dispatcher', 'gateway'] as const) {
    const peak = ctx.rss[app];
    const source = app === 'gateway' ? 'section 4' : 'section 3';
    ctx.rows.push(
      peak === undefined
        ? failedRow(
            { section: SECTION, name: `${app} peak RSS under load`, unit: 'MB', target: rssTarget },
            `not sampled (${source} did not run or its app did not start)`,
          )
        : row({
            section: SECTION,
            name: `${app} peak RSS under load`,
            unit: 'MB',
            value: peak / MB,
            target: rssTarget,
            note: [
              ctx.idleRss[app] === undefined
                ? undefined
                : `${Math.round(ctx.idleRss[app] / MB)} MB right after start-up`,
              describeHeap(ctx.heap[app]),
            ]
              .filter(Boolean)
              .join('; '),
          }),
    );
  }
  const references = [
    ['B1', 'B1 bare webhook server peak RSS (reference)'],
    ['B4', 'B4 bare proxy peak RSS (reference)'],
  ] as const;
  for (const [name, label] of references) {
    const peak = ctx.referenceRss[name];
    if (peak !== undefined) {
      ctx.rows.push(row({ section: SECTION, name: label, unit: 'MB', value: peak / MB }));
    }
  }
  await redisPerDelivery(ctx);
}

interface RedisPerDelivery {
  name: string;
  pending: number;
  stream: UpdateStream;
  payload: number;
  limit: number;
  target: { kind: 'at-most'; max: number; unit: 'B' };
}

async function redisPerDelivery(ctx: BenchContext): Promise<void> {
  const pending = ctx.options.quick ? 30_000 : 100_000;
  const stream: UpdateStream = { firstId: 1, chats: 1000 };
  const payload = Buffer.byteLength(updateJson(stream, stream.firstId + pending / 2));
  const limit = 2 * payload + 512;
  const m: RedisPerDelivery = {
    name: `Redis per queued delivery (${pending.toLocaleString('en-US')} pending)`,
    pending,
    stream,
    payload,
    limit,
    target: { kind: 'at-most', max: limit, unit: 'B' },
  };
  let redis: RedisTarget | undefined;
  let install: RelaygramInstall | undefined;
  let load: BenchChild | undefined;
  let receiver: BenchChild | undefined;
  try {
    redis = await privateRedis();
    receiver = await BenchChild.start('receiver');
    const { url } = await receiver.call<{ url: string }>('start', { mode: 'count' });
    const targetUrl = `${url}/hook`;
    const webhookSecret = secret();
    install = new RelaygramInstall(
      `${ctx.runPrefix}-memory`,
      redis.url,
      ctx.emulator.apiRoot,
      benchBot(ctx, webhookSecret),
      [{ name: ROUTE, targetUrl, ordering: 'chat' }],
    );
    let started;
    try {
      started = await install.start('ingress', ctx.options.launch, 'memory-ingress');
    } catch (error) {
      ctx.rows.push(
        failedRow(
          { section: SECTION, name: m.name, unit: 'B', target: m.target },
          `ingress did not start: ${firstLine(error)}`,
        ),
      );
      return;
    }
    load = await BenchChild.start('load', { name: 'autocannon' });
    await sleep(1000);
    const queued = await queueAndWeigh(ctx, m, redis, load, {
      url: `${started.url}/webhooks/telegram/${BOT}`,
      headers: { 'x-telegram-bot-api-secret-token': webhookSecret },
      statsKey: `${install.prefix}:bot-stats:${BOT}`,
    });
    if (queued) {
      const run = { redis, install, route: ROUTE, updates: pending, ...queued };
      await weighDeliveryLog(ctx, run, targetUrl);
    }
  } finally {
    await load?.stop();
    await receiver?.stop();
    await install?.close();
    // A private server: stopping it throws everything away, no key deletion needed.
    await redis?.stop();
  }
}

/**
 * POSTs the pending updates with no dispatcher running, and weighs what Redis holds for
 * each; returns used_memory before and the queued count, undefined when nothing queued.
 */
async function queueAndWeigh(
  ctx: BenchContext,
  m: RedisPerDelivery,
  redis: RedisTarget,
  load: BenchChild,
  ingress: { url: string; headers: Record<string, string>; statsKey: string },
): Promise<{ before: number; queued: number } | undefined> {
  const { name, pending, stream, payload, limit, target } = m;
  const before = await usedMemory(redis);
  ctx.log(`memory: POSTing ${pending} updates to ingress on a private redis-server`);
  const result = await load.call<LoadResult>('run', {
    url: ingress.url,
    headers: ingress.headers,
    body: { kind: 'update', stream, firstId: stream.firstId },
    connections: 50,
    durationSec: 600,
    amount: pending,
  });
  const queued = Number((await redis.client.hget(ingress.statsKey, 'queued')) ?? 0);
  const after = await usedMemory(redis);
  if (queued === 0) {
    ctx.rows.push(
      failedRow(
        { section: SECTION, name, unit: 'B', target },
        `nothing was queued (${result.non2xx} non-2xx)`,
      ),
    );
    return undefined;
  }
  const perDelivery = (after - before) / queued;
  ctx.rows.push(
    row({
      section: SECTION,
      name,
      unit: 'B',
      value: perDelivery,
      target,
      note: `payload ${payload} B, limit 2 x payload + 512 = ${limit} B${queued < pending ? `; only ${queued} queued` : ''}`,
    }),
  );
  ctx.details.memory = {
    rssBytes: ctx.rss,
    heap: ctx.heap,
    idleRssBytes: ctx.idleRss,
    referenceRssBytes: ctx.referenceRss,
    redis: {
      pending,
      queued,
      payloadBytes: payload,
      usedBefore: before,
      usedAfter: after,
      perDelivery,
      limit,
    },
  };
  return { before, queued };
}
