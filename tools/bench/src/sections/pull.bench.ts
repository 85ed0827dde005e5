import { Agent, request } from 'undici';
import { BENCH_BOT as BOT, benchBot } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import { tcpConnectionsTo } from '@relaygram/testing';
import { CpuWindow, RssSampler, rssBytes } from '../harness/proc-stats';
import { prefillLanes } from '../harness/prefill';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, secret, type AppProcess } from '../harness/relaygram-install';
import type { UpdateStream } from '../harness/update-factory';
import { failedRow, firstLine, row } from '../report/results';

const SECTION = '6 pull';
const ROUTE = 'pulled';
const CLIENT = 'poller';
const WAITERS = 500;
const MB = 2 ** 20;
const RSS_ROW = {
  section: SECTION,
  name: `${WAITERS} waiting getUpdates: RSS added`,
  unit: 'MB',
  target: { kind: 'at-most', max: 50, unit: 'MB' },
} as const;
const CPU_ROW = {
  section: SECTION,
  name: `${WAITERS} waiting getUpdates: CPU while idle`,
  unit: '%',
  target: { kind: 'at-most', max: 5, unit: '% of a core' },
} as const;

/**
 * Section 6: pull routes. The rate at which a client that polls with `limit: 100`
 * (confirming each batch with the next call's offset) takes queued updates, against the
 * dispatcher's `chat` rate of the same run; and what 500 getUpdates calls waiting at
 * once cost one gateway while nothing arrives: RSS added, CPU, Redis connections.
 */
export async function pullBench(ctx: BenchContext): Promise<void> {
  await pullRate(ctx);
  await waitingCalls(ctx);
}

async function pullRate(ctx: BenchContext): Promise<void> {
  const total = ctx.options.quick ? 10_000 : 20_000;
  const name = 'getUpdates, limit 100';
  const target = { kind: 'ratio-at-least', min: 1.0 } as const;
  const chat = (ctx.details.dispatcher as Record<string, { rate?: number }> | undefined)?.chat
    ?.rate;
  const prefix = `${ctx.runPrefix}-pull-rate`;
  const token = secret();
  let install: RelaygramInstall | undefined;
  try {
    const stream: UpdateStream = { firstId: 1, chats: 1000 };
    await prefillLanes(ctx.redis.client, prefix, {
      bot: BOT,
      route: ROUTE,
      ordering: 'strict',
      stream,
      count: total,
      pull: true,
    });
    install = new RelaygramInstall(
      prefix,
      ctx.redis.url,
      ctx.emulator.apiRoot,
      benchBot(ctx),
      [{ name: ROUTE, pullClient: CLIENT }],
      [{ name: CLIENT, token }],
    );
    const app = await install.start('gateway', ctx.options.launch, 'gateway-pull');
    const url = `${app.url}/bot${ctx.emulator.bot.id}:${token}/getUpdates`;
    ctx.log(`pull: taking ${total} queued updates with getUpdates, limit 100`);
    const cpu = new CpuWindow([app.pid]).start();
    const started = performance.now();
    let taken = 0;
    let offset = 0;
    while (taken < total) {
      const res = await request(`${url}?limit=100&timeout=5${offset ? `&offset=${offset}` : ''}`);
      const body = (await res.body.json()) as { ok: boolean; result?: { update_id: number }[] };
      if (!body.ok || !body.result?.length)
        throw new Error(`getUpdates answered ${res.statusCode} with no updates after ${taken}`);
      taken += body.result.length;
      offset = (body.result.at(-1)?.update_id ?? 0) + 1;
    }
    // The last batch is confirmed too, as a framework's next call would.
    await (await request(`${url}?limit=1&offset=${offset}`)).body.dump();
    const seconds = (performance.now() - started) / 1000;
    const used = cpu.stop().get(app.pid);
    const rate = taken / seconds;
    ctx.log(`pull: ${Math.round(rate)} updates/s`);
    ctx.rows.push(
      row({
        section: SECTION,
        name,
        unit: '/s',
        value: rate,
        baseline: chat,
        baselineName: 'dispatcher chat',
        target: chat === undefined ? undefined : target,
        note: chat === undefined ? 'no dispatcher chat rate in this run' : undefined,
      }),
    );
    ctx.rows.push(
      row({
        section: SECTION,
        name: 'getUpdates: gateway CPU per update',
        unit: 'µs',
        value: used === undefined ? undefined : used / taken,
      }),
    );
    ctx.details.pull = { ...(ctx.details.pull as object), rate: { total, seconds, rate, chat } };
  } catch (error) {
    ctx.rows.push(failedRow({ section: SECTION, name, unit: '/s', target }, firstLine(error)));
  } finally {
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
}

async function waitingCalls(ctx: BenchContext): Promise<void> {
  const idleSeconds = ctx.options.quick ? 5 : 10;
  const prefix = `${ctx.runPrefix}-pull-wait`;
  const clients = Array.from({ length: WAITERS }, (_, i) => ({ name: `w${i}`, token: secret() }));
  const agent = new Agent({ connections: WAITERS + 10, headersTimeout: 120_000 });
  let install: RelaygramInstall | undefined;
  let app: AppProcess | undefined;
  const calls: Promise<unknown>[] = [];
  try {
    install = new RelaygramInstall(
      prefix,
      ctx.redis.url,
      ctx.emulator.apiRoot,
      benchBot(ctx),
      clients.map((c) => ({ name: c.name, pullClient: c.name })),
      clients,
    );
    app = await install.start('gateway', ctx.options.launch, 'gateway-pull-wait');
    const url = (token: string) => `${app!.url}/bot${ctx.emulator.bot.id}:${token}/getUpdates`;
    // One short poll first: the notice subscriber exists before the measurement.
    await (await request(`${url(clients[0]!.token)}?timeout=1`, { dispatcher: agent })).body.dump();
    await sleep(2000);
    await measureWaiting(ctx, app.pid, idleSeconds, () => {
      for (const c of clients) {
        calls.push(
          request(`${url(c.token)}?timeout=50`, { dispatcher: agent }).then(
            (res) => res.body.dump(),
            () => undefined,
          ),
        );
      }
    });
  } catch (error) {
    const reason = firstLine(error);
    ctx.rows.push(failedRow(RSS_ROW, reason), failedRow(CPU_ROW, reason));
  } finally {
    await agent.destroy();
    await Promise.all(calls);
    await install?.close();
    await deleteKeys(ctx.redis.client, prefix);
  }
}

/** RSS, CPU and Redis connections of the gateway while the calls `startWaiting` makes wait with nothing to take. */
async function measureWaiting(
  ctx: BenchContext,
  pid: number,
  idleSeconds: number,
  startWaiting: () => void,
): Promise<void> {
  const before = rssBytes(pid) ?? Number.NaN;
  const redisPort = Number(new URL(ctx.redis.url).port || 6379);
  const connectionsBefore = tcpConnectionsTo(pid, redisPort);
  ctx.log(`pull: ${WAITERS} getUpdates calls waiting, ${idleSeconds} s`);
  startWaiting();
  await sleep(3000);
  const sampler = new RssSampler([pid]).start();
  const cpu = new CpuWindow([pid]).start();
  const started = performance.now();
  await sleep(idleSeconds * 1000);
  const used = cpu.stop().get(pid);
  const seconds = (performance.now() - started) / 1000;
  const peak = sampler.stop().get(pid) ?? Number.NaN;
  const connections = tcpConnectionsTo(pid, redisPort);
  const cpuPercent = used === undefined ? undefined : used / 1e4 / seconds;
  ctx.rows.push(
    row({
      section: SECTION,
      name: RSS_ROW.name,
      unit: 'MB',
      value: (peak - before) / MB,
      target: RSS_ROW.target,
      note: `${Math.round(before / MB)} MB before, ${Math.round(peak / MB)} MB while they wait`,
    }),
    row({
      section: SECTION,
      name: CPU_ROW.name,
      unit: '%',
      value: cpuPercent,
      target: CPU_ROW.target,
    }),
    row({
      section: SECTION,
      name: `${WAITERS} waiting getUpdates: gateway's Redis connections`,
      unit: '',
      value: connections,
      target: { kind: 'at-most', max: 10, unit: 'connections' },
      note: `${connectionsBefore ?? '?'} before they wait`,
    }),
  );
  ctx.details.pull = {
    ...(ctx.details.pull as object),
    waiting: { waiters: WAITERS, rssBefore: before, rssPeak: peak, cpuPercent, connections },
  };
}
