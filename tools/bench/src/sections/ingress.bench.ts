import { request } from 'undici';
import { row, failedRow, firstLine } from '../report/results';
import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot, sharedRedisNote, withRedisPid } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import type { ClosedLoopSpec, LoadResult } from '../harness/load-spec';
import { CpuWindow, RssSampler } from '../harness/proc-stats';
import { deleteKeys } from '../harness/redis-target';
import { RelaygramInstall, profileArgs, secret } from '../harness/relaygram-install';
import { BENCH_CHATS, updateJson, type UpdateStream } from '../harness/update-factory';
import { Samples } from '../stats/percentiles';

const SECTION = '1 ingress';
const ROUTE = 'updates';
const CONNECTIONS = 50;
/** Chats the updates rotate over: lanes of `chat` ordering, as many users write at once. */
const THROUGHPUT_ROW = {
  section: SECTION,
  name: 'throughput',
  unit: 'req/s',
  target: { kind: 'ratio-at-least', min: 0.75 },
} as const;

interface Server {
  name: string;
  url: string;
  pid: number;
  prefix: string;
  nextId: number;
  ok: number;
  non2xx: number;
  errors: number;
  durationMs: number;
  latencies: Samples;
  cpuMicros: number;
  redisCpuMicros: number;
}

/**
 * Section 1: webhook POSTs with fresh update_ids against the ingress app and against
 * B1 (bare Fastify + the same dedup+enqueue script), on the same Redis, each under its
 * own key prefix, interleaved round by round so that load from elsewhere on the box
 * hits both alike. Keys are deleted after every measurement so neither works against a
 * fuller Redis than the other.
 */
export async function ingressBench(ctx: BenchContext): Promise<void> {
  const { quick } = ctx.options;
  const webhookSecret = secret();
  const install = new RelaygramInstall(
    `${ctx.runPrefix}-ingress`,
    ctx.redis.url,
    ctx.emulator.apiRoot,
    benchBot(ctx, webhookSecret),
    [{ name: ROUTE, targetUrl: 'http://127.0.0.1:9/unused', ordering: 'chat' }],
  );
  const children: BenchChild[] = [];
  try {
    const b1 = await BenchChild.start('b1-server', {
      name: 'B1',
      nodeArgs: profileArgs(ctx.options.launch, 'b1'),
    });
    children.push(b1);
    const b1Prefix = `${ctx.runPrefix}-b1`;
    const { url: b1Url } = await b1.call<{ url: string }>('start', {
      redisUrl: ctx.redis.url,
      prefix: b1Prefix,
      bot: BOT,
      route: ROUTE,
      secret: webhookSecret,
    });
    let ingress;
    try {
      ingress = await install.start('ingress', ctx.options.launch);
    } catch (error) {
      ctx.rows.push(failedRow(THROUGHPUT_ROW, `ingress did not start: ${firstLine(error)}`));
      return;
    }
    const load = await BenchChild.start('load', { name: 'autocannon' });
    children.push(load);
    const b1Rss = new RssSampler([b1.pid]).start();

    const servers: Server[] = [
      server('B1', b1Url, b1.pid, b1Prefix),
      server('relaygram', ingress.url, ingress.pid, install.prefix),
    ];
    const run = new WebhookLoad(ctx, load, webhookSecret);
    const problem = await run.probe(servers);
    if (problem) {
      ctx.rows.push(failedRow(THROUGHPUT_ROW, `${problem.server.name} webhook: ${problem.text}`));
      if (problem.server.name === 'relaygram') ctx.log(ingress.logTail());
      return;
    }
    await run.warmUp(servers, quick ? 2 : 5);
    await run.measureRounds(servers, quick ? 1 : 3, quick ? 5 : 10);
    ctx.referenceRss.B1 = b1Rss.stop().get(b1.pid);
    reportRows(ctx, servers);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install.close();
    await deleteKeys(ctx.redis.client, install.prefix);
    await deleteKeys(ctx.redis.client, `${ctx.runPrefix}-b1`);
  }
}

/** Webhook POSTs from the load generator to B1 and the ingress app, alike for both. */
class WebhookLoad {
  private readonly stream: UpdateStream = { firstId: 1, chats: BENCH_CHATS };
  private readonly path = `/webhooks/telegram/${BOT}`;
  private readonly headers: Record<string, string>;

  constructor(
    private readonly ctx: BenchContext,
    private readonly load: BenchChild,
    webhookSecret: string,
  ) {
    this.headers = { 'x-telegram-bot-api-secret-token': webhookSecret };
  }

  /** One POST to each server; the first that did not queue it, and what it answered. */
  async probe(servers: Server[]): Promise<{ server: Server; text: string } | undefined> {
    for (const s of servers) {
      const problem = await probe(`${s.url}${this.path}`, this.headers, updateJson(this.stream, 0));
      if (problem) return { server: s, text: problem };
    }
    return undefined;
  }

  async warmUp(servers: Server[], warmSec: number): Promise<void> {
    for (const s of servers) {
      this.ctx.log(`ingress: warming ${s.name} up (${warmSec} s)`);
      const warm = await this.load.call<LoadResult>('run', this.spec(s, warmSec));
      s.nextId += warm.idsUsed;
      await deleteKeys(this.ctx.redis.client, s.prefix);
    }
  }

  async measureRounds(servers: Server[], rounds: number, runSec: number): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      // Alternate who goes first, so a trend in the box's load does not favour one.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        this.ctx.log(`ingress: round ${round + 1}/${rounds}, ${s.name} (${runSec} s)`);
        await this.measure(s, runSec);
      }
    }
  }

  private async measure(s: Server, runSec: number): Promise<void> {
    const { ctx } = this;
    const cpu = new CpuWindow(withRedisPid(ctx, [s.pid])).start();
    const result = await this.load.call<LoadResult>('run', this.spec(s, runSec));
    const used = cpu.stop();
    s.nextId += result.idsUsed;
    s.ok += result.ok;
    s.non2xx += result.non2xx;
    s.errors += result.errors;
    s.durationMs += result.durationMs;
    s.latencies.addAll(result.latencies);
    s.cpuMicros += used.get(s.pid) ?? Number.NaN;
    if (ctx.redis.pid) s.redisCpuMicros += used.get(ctx.redis.pid) ?? Number.NaN;
    await deleteKeys(ctx.redis.client, s.prefix);
  }

  private spec(s: Server, durationSec: number): ClosedLoopSpec {
    return {
      url: `${s.url}${this.path}`,
      headers: this.headers,
      body: { kind: 'update', stream: this.stream, firstId: s.nextId },
      connections: CONNECTIONS,
      durationSec,
    };
  }
}

const rps = (s: Server) => (s.durationMs > 0 ? (s.ok * 1000) / s.durationMs : undefined);
const perRequest = (micros: number, s: Server) => (s.ok > 0 ? micros / s.ok : undefined);

function reportRows(ctx: BenchContext, servers: Server[]): void {
  const [base, rg] = servers;
  const failures = (s: Server) =>
    s.non2xx + s.errors > 0 ? `${s.name}: ${s.non2xx} non-2xx, ${s.errors} errors` : undefined;
  const note = [failures(rg), failures(base)].filter(Boolean).join('; ') || undefined;
  const b = base.latencies.summary();
  const r = rg.latencies.summary();
  ctx.rows.push(
    row({
      section: SECTION,
      name: `throughput (${CONNECTIONS} conn.)`,
      unit: 'req/s',
      value: rps(rg),
      baseline: rps(base),
      baselineName: 'B1',
      target: { kind: 'ratio-at-least', min: 0.75 },
      note,
    }),
    row({
      section: SECTION,
      name: 'p50 latency',
      unit: 'ms',
      value: r.p50,
      baseline: b.p50,
      baselineName: 'B1',
    }),
    row({
      section: SECTION,
      name: 'p99 latency',
      unit: 'ms',
      value: r.p99,
      baseline: b.p99,
      baselineName: 'B1',
      target: { kind: 'ratio-at-most', max: 2 },
    }),
    row({
      section: SECTION,
      name: 'server CPU per request',
      unit: 'µs',
      value: perRequest(rg.cpuMicros, rg),
      baseline: perRequest(base.cpuMicros, base),
      baselineName: 'B1',
    }),
  );
  if (ctx.redis.pid) {
    ctx.rows.push(
      row({
        section: SECTION,
        name: 'Redis CPU per request',
        unit: 'µs',
        value: perRequest(rg.redisCpuMicros, rg),
        baseline: perRequest(base.redisCpuMicros, base),
        baselineName: 'B1',
        note: sharedRedisNote(ctx),
      }),
    );
  }
  ctx.details.ingress = servers.map((s) => ({
    name: s.name,
    requests: s.ok,
    non2xx: s.non2xx,
    errors: s.errors,
    seconds: s.durationMs / 1000,
    rps: rps(s),
    latencyMs: s.latencies.summary(),
    cpuMicrosPerRequest: perRequest(s.cpuMicros, s),
    redisCpuMicrosPerRequest: perRequest(s.redisCpuMicros, s),
  }));
}

function server(name: string, url: string, pid: number, prefix: string): Server {
  return {
    name,
    url,
    pid,
    prefix,
    nextId: 1,
    ok: 0,
    non2xx: 0,
    errors: 0,
    durationMs: 0,
    latencies: new Samples(1 << 18),
    cpuMicros: 0,
    redisCpuMicros: 0,
  };
}

/** One webhook POST; a description of what is wrong, or undefined when it was queued. */
async function probe(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<string | undefined> {
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.body.text();
    if (res.statusCode !== 202) return `answered ${res.statusCode} ${text.slice(0, 200)}`;
    const json = JSON.parse(text) as { status?: string; deliveries?: number };
    if (json.status !== 'queued' || json.deliveries !== 1)
      return `answered 202 ${text.slice(0, 200)}, expected one queued delivery`;
    return undefined;
  } catch (error) {
    return firstLine(error);
  }
}
