import { request } from 'undici';
import { row, failedRow } from '../report/results';
import { BenchChild } from '../harness/bench-child';
import type { BenchContext } from '../harness/bench-context';
import type { ClosedLoopSpec, LoadResult } from '../harness/load-spec';
import { CpuWindow, RssSampler } from '../harness/proc-stats';
import { deleteKeys } from '../harness/redis-target';
import {
  RelaygramInstall,
  profileArgs,
  secret,
  type AppProcess,
} from '../harness/relaygram-install';
import { updateJson, type UpdateStream } from '../harness/update-factory';
import { Samples } from '../stats/percentiles';

const SECTION = '1 ingress';
const BOT = 'bench-bot';
const ROUTE = 'updates';
const CONNECTIONS = 50;
/** Chats the updates rotate over: lanes of `chat` ordering, as many users write at once. */
const CHATS = 1000;

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
  const warmSec = quick ? 2 : 5;
  const runSec = quick ? 5 : 10;
  const rounds = quick ? 1 : 3;
  const webhookSecret = secret();
  const stream: UpdateStream = { firstId: 1, chats: CHATS };
  const bot = {
    id: BOT,
    token: ctx.emulator.bot.token,
    username: ctx.emulator.bot.username,
    webhookSecret,
  };
  const install = new RelaygramInstall(
    `${ctx.runPrefix}-ingress`,
    ctx.redis.url,
    ctx.emulator.apiRoot,
    bot,
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
    let ingress: AppProcess;
    try {
      ingress = await install.start('ingress', ctx.options.launch);
    } catch (error) {
      ctx.rows.push(
        failedRow(
          {
            section: SECTION,
            name: 'throughput',
            unit: 'req/s',
            target: { kind: 'ratio-at-least', min: 0.75 },
          },
          `ingress did not start: ${firstLine(error)}`,
        ),
      );
      return;
    }
    const load = await BenchChild.start('load', { name: 'autocannon' });
    children.push(load);
    const b1Rss = new RssSampler([b1.pid]).start();

    const servers: Server[] = [
      server('B1', b1Url, b1.pid, b1Prefix),
      server('relaygram', ingress.url, ingress.pid, install.prefix),
    ];
    const path = `/webhooks/telegram/${BOT}`;
    const headers = { 'x-telegram-bot-api-secret-token': webhookSecret };

    for (const s of servers) {
      const problem = await probe(`${s.url}${path}`, headers, updateJson(stream, 0));
      if (problem) {
        ctx.rows.push(
          failedRow(
            {
              section: SECTION,
              name: 'throughput',
              unit: 'req/s',
              target: { kind: 'ratio-at-least', min: 0.75 },
            },
            `${s.name} webhook: ${problem}`,
          ),
        );
        if (s.name === 'relaygram') ctx.log(ingress.logTail());
        return;
      }
    }

    const spec = (s: Server, durationSec: number): ClosedLoopSpec => ({
      url: `${s.url}${path}`,
      headers,
      body: { kind: 'update', stream, firstId: s.nextId },
      connections: CONNECTIONS,
      durationSec,
    });

    for (const s of servers) {
      ctx.log(`ingress: warming ${s.name} up (${warmSec} s)`);
      const warm = await load.call<LoadResult>('run', spec(s, warmSec));
      s.nextId += warm.idsUsed;
      await deleteKeys(ctx.redis.client, s.prefix);
    }

    for (let round = 0; round < rounds; round++) {
      // Alternate who goes first, so a trend in the box's load does not favour one.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        ctx.log(`ingress: round ${round + 1}/${rounds}, ${s.name} (${runSec} s)`);
        const pids = [s.pid, ...(ctx.redis.pid ? [ctx.redis.pid] : [])];
        const cpu = new CpuWindow(pids).start();
        const result = await load.call<LoadResult>('run', spec(s, runSec));
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
    }

    ctx.referenceRss.B1 = b1Rss.stop().get(b1.pid);
    const [base, rg] = servers;
    const rps = (s: Server) => (s.durationMs > 0 ? (s.ok * 1000) / s.durationMs : undefined);
    const perRequest = (micros: number, s: Server) => (s.ok > 0 ? micros / s.ok : undefined);
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
          note:
            ctx.redis.source === 'private redis-server'
              ? undefined
              : 'shared Redis: includes other clients',
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
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install.close();
    await deleteKeys(ctx.redis.client, install.prefix);
    await deleteKeys(ctx.redis.client, `${ctx.runPrefix}-b1`);
  }
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

/**
 * An error on one line for a table note: its first line and, when an app's log tail
 * follows (a failed start), the last line of that log, which usually says why.
 */
export function firstLine(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? 'unknown error';
  const last = lines.length > 1 ? lines[lines.length - 1].slice(0, 240) : undefined;
  return last ? `${first} ${last}` : first;
}
