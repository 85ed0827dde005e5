import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'undici';
import { parse, stringify } from 'yaml';
import { BenchChild } from '../harness/bench-child';
import type { BenchContext } from '../harness/bench-context';
import type { ClosedLoopSpec, LoadResult } from '../harness/load-spec';
import { CpuWindow, RssSampler, scrapeHeap } from '../harness/proc-stats';
import {
  RelaygramInstall,
  profileArgs,
  secret,
  type AppProcess,
} from '../harness/relaygram-install';
import { failedRow, row } from '../report/results';
import { Samples } from '../stats/percentiles';
import { firstLine } from './ingress.bench';

const SECTION = '4 gateway';
/** Turns of the one-connection measurement of pacing on and off. */
const SINGLE_TURNS = 10;
const BOT = 'bench-bot';
const CONNECTIONS = 50;
const MESSAGE = JSON.stringify({
  chat_id: 100000042,
  text: 'Your order #48213 has shipped. Track it here: https://shop.example/track/48213',
});

interface Path {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  pid?: number;
  ok: number;
  failed: number;
  durationMs: number;
  cpuMicros: number;
  latencies: Samples;
  /** Response times with one connection: the cost of one call, without queueing. */
  single: Samples;
}

/** Budgets far above what the bench offers (one chat, thousands a second): pacing never waits. */
const ROOMY_OUTBOUND = {
  per_second: 100_000,
  per_chat_per_second: 100_000,
  chat_burst: 100_000,
  per_group_per_minute: 100_000,
};

/**
 * Section 4: sendMessage three ways against the same emulator: straight to it (the
 * baseline), through the gateway's REST API (`messages/send`), and through its Bot API
 * drop-in. Throughput with 50 connections; added latency from the median of one
 * connection's calls, where no request waits behind another. B4, a bare proxy, is
 * measured alongside as a reference: it shows how much of direct's throughput any
 * extra hop costs on this machine.
 *
 * The gateway runs twice, from two configs that differ only in `outbound`: pacing on
 * with budgets far above the load (each call then costs its Redis script and nothing
 * else), and pacing off. Both are measured in the same rounds, so what pacing costs is
 * read as on / off of one run.
 */
export async function gatewayBench(ctx: BenchContext): Promise<void> {
  const { quick } = ctx.options;
  const warmSec = quick ? 2 : 4;
  const runSec = quick ? 4 : 8;
  const singleSec = quick ? 2 : 5;
  const rounds = quick ? 1 : 3;
  const clientToken = randomBytes(24).toString('base64url');
  const { bot, apiRoot } = ctx.emulator;
  const install = new RelaygramInstall(
    `${ctx.runPrefix}-gateway`,
    ctx.redis.url,
    apiRoot,
    { id: BOT, token: bot.token, username: bot.username, webhookSecret: secret() },
    [],
    [{ name: 'bench-client', token: clientToken }],
  );
  const unpacedInstall = new RelaygramInstall(
    `${ctx.runPrefix}-gateway-unpaced`,
    ctx.redis.url,
    apiRoot,
    { id: BOT, token: bot.token, username: bot.username, webhookSecret: secret() },
    [],
    [{ name: 'bench-client', token: clientToken }],
  );
  setOutbound(install.configPath, ROOMY_OUTBOUND);
  setOutbound(unpacedInstall.configPath, { enabled: false });
  const children: BenchChild[] = [];
  try {
    let gateway: AppProcess;
    let unpaced: AppProcess;
    try {
      gateway = await install.start('gateway', ctx.options.launch);
      unpaced = await unpacedInstall.start('gateway', ctx.options.launch, 'gateway-unpaced');
    } catch (error) {
      missAll(ctx, `gateway did not start: ${firstLine(error)}`);
      return;
    }
    const load = await BenchChild.start('load', { name: 'autocannon' });
    children.push(load);
    const proxy = await BenchChild.start('b4-proxy', {
      name: 'B4',
      nodeArgs: profileArgs(ctx.options.launch, 'b4'),
    });
    children.push(proxy);
    const { url: proxyUrl } = await proxy.call<{ url: string }>('start', {
      apiRoot,
      token: bot.token,
    });
    const numericId = bot.token.split(':')[0];
    const json = { 'content-type': 'application/json' };
    // Each path next to the one it is compared with, so load from elsewhere on the
    // machine hits both alike.
    const paths: Path[] = [
      path('direct', `${apiRoot}/bot${bot.token}/sendMessage`, json, ctx.emulator.child.pid),
      path(
        'messages/send',
        `${gateway.url}/api/v1/${BOT}/messages/send`,
        { ...json, 'x-service-token': clientToken },
        gateway.pid,
      ),
      path(
        'messages/send, pacing off',
        `${unpaced.url}/api/v1/${BOT}/messages/send`,
        { ...json, 'x-service-token': clientToken },
        unpaced.pid,
      ),
      path(
        'drop-in',
        `${gateway.url}/bot${numericId}:${clientToken}/sendMessage`,
        json,
        gateway.pid,
      ),
      path(
        'drop-in, pacing off',
        `${unpaced.url}/bot${numericId}:${clientToken}/sendMessage`,
        json,
        unpaced.pid,
      ),
      path('B4 bare proxy', `${proxyUrl}/proxy/sendMessage`, json, proxy.pid),
    ];
    const [direct, rest, restUnpaced, dropIn, dropInUnpaced, bare] = paths as [
      Path,
      Path,
      Path,
      Path,
      Path,
      Path,
    ];

    const broken = new Map<string, string>();
    for (const p of paths) {
      const problem = await probe(p);
      if (problem) broken.set(p.name, problem);
    }
    if (broken.has('direct')) {
      missAll(ctx, `the emulator itself failed: ${broken.get('direct')}`);
      return;
    }
    const working = paths.filter((p) => !broken.has(p.name));
    const rss = new RssSampler([gateway.pid, unpaced.pid, proxy.pid]).start();

    for (const p of working) {
      ctx.log(`gateway: warming ${p.name} up (${warmSec} s)`);
      await load.call<LoadResult>('run', spec(p, CONNECTIONS, warmSec));
    }
    // Pacing on and off of one path are measured in short turns, one after the other,
    // so that load from elsewhere on the machine falls on both sides alike.
    const pairs = new Map<Path, Path>([
      [rest, restUnpaced],
      [dropIn, dropInUnpaced],
    ]);
    const measure = async (p: Path, seconds: number) => {
      const cpu = new CpuWindow(p.pid === undefined ? [] : [p.pid]).start();
      const result = await load.call<LoadResult>('run', spec(p, CONNECTIONS, seconds));
      const used = p.pid === undefined ? undefined : cpu.stop().get(p.pid);
      p.ok += result.ok;
      p.failed += result.non2xx + result.errors;
      p.durationMs += result.durationMs;
      p.cpuMicros += used ?? Number.NaN;
      p.latencies.addAll(result.latencies);
    };
    const measureSingle = async (p: Path, spec1: ClosedLoopSpec) => {
      const single = await load.call<LoadResult>('run', spec1);
      p.single.addAll(single.latencies);
    };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? working : [...working].reverse();
      for (const p of order) {
        const partner = pairs.get(p);
        if ([...pairs.values()].includes(p)) continue;
        if (partner && working.includes(partner)) {
          ctx.log(`gateway: round ${round + 1}/${rounds}, ${p.name}, pacing on and off by turns`);
          for (let turn = 0; turn < runSec; turn++) {
            const [first, second] = turn % 2 === 0 ? [p, partner] : [partner, p];
            await measure(first, 1);
            await measure(second, 1);
          }
          for (let turn = 0; turn < SINGLE_TURNS; turn++) {
            const [first, second] = turn % 2 === 0 ? [p, partner] : [partner, p];
            await measureSingle(first, { ...spec(first, 1, 0), amount: singleCalls(singleSec) });
            await measureSingle(second, { ...spec(second, 1, 0), amount: singleCalls(singleSec) });
          }
          continue;
        }
        ctx.log(`gateway: round ${round + 1}/${rounds}, ${p.name} (${runSec} s + ${singleSec} s)`);
        await measure(p, runSec);
        await measureSingle(p, spec(p, 1, singleSec));
      }
    }
    ctx.heap.gateway = await scrapeHeap(gateway.adminUrl);
    const peaks = rss.stop();
    ctx.rss.gateway = peaks.get(gateway.pid);
    ctx.referenceRss.B4 = peaks.get(proxy.pid);
    ctx.idleRss.gateway = gateway.idleRssBytes;

    const rps = (p: Path) => (p.durationMs > 0 ? (p.ok * 1000) / p.durationMs : undefined);
    for (const p of [rest, dropIn]) {
      const problem = broken.get(p.name);
      if (problem) {
        ctx.rows.push(
          failedRow(
            {
              section: SECTION,
              name: `${p.name} throughput`,
              unit: 'req/s',
              target: { kind: 'ratio-at-least', min: 0.7 },
            },
            problem,
          ),
          failedRow(
            {
              section: SECTION,
              name: `${p.name} added p50`,
              unit: 'ms',
              target: { kind: 'added-at-most', max: 1, unit: 'ms' },
            },
            problem,
          ),
        );
        continue;
      }
      ctx.rows.push(
        row({
          section: SECTION,
          name: `${p.name} throughput (${CONNECTIONS} conn.)`,
          unit: 'req/s',
          value: rps(p),
          baseline: rps(direct),
          baselineName: 'direct',
          target: { kind: 'ratio-at-least', min: 0.7 },
          note: p.failed ? `${p.failed} calls failed` : undefined,
        }),
        row({
          section: SECTION,
          name: `${p.name} p50, 1 conn. (added)`,
          unit: 'ms',
          value: p.single.percentile(50),
          baseline: direct.single.percentile(50),
          baselineName: 'direct',
          target: { kind: 'added-at-most', max: 1, unit: 'ms' },
        }),
        row({
          section: SECTION,
          name: `${p.name} gateway CPU per call`,
          unit: 'µs',
          value: p.ok > 0 ? p.cpuMicros / p.ok : undefined,
        }),
      );
    }
    for (const [on, off, name] of [
      [rest, restUnpaced, 'messages/send'],
      [dropIn, dropInUnpaced, 'drop-in'],
    ] as const) {
      const problem = broken.get(on.name) ?? broken.get(off.name);
      const throughput = {
        section: SECTION,
        name: `${name} throughput, pacing on vs off (${CONNECTIONS} conn.)`,
        unit: 'req/s',
        target: { kind: 'ratio-at-least' as const, min: 0.85 },
      };
      const added = {
        section: SECTION,
        name: `${name} p50 added by pacing, 1 conn.`,
        unit: 'ms',
        target: { kind: 'added-at-most' as const, max: 0.3, unit: 'ms' },
      };
      if (problem) {
        ctx.rows.push(failedRow(throughput, problem), failedRow(added, problem));
        continue;
      }
      ctx.rows.push(
        row({
          ...throughput,
          value: rps(on),
          baseline: rps(off),
          baselineName: 'pacing off',
          note: on.failed ? `${on.failed} calls failed` : undefined,
        }),
        row({
          ...added,
          value: on.single.percentile(50),
          baseline: off.single.percentile(50),
          baselineName: 'pacing off',
        }),
        row({
          section: SECTION,
          name: `${name} gateway CPU per call, pacing off`,
          unit: 'µs',
          value: off.ok > 0 ? off.cpuMicros / off.ok : undefined,
        }),
      );
    }
    if (!broken.has(bare.name)) {
      ctx.rows.push(
        row({
          section: SECTION,
          name: `${bare.name} throughput (reference)`,
          unit: 'req/s',
          value: rps(bare),
          baseline: rps(direct),
          baselineName: 'direct',
          note: 'Fastify + undici relaying bytes: the most any proxy keeps of direct on this machine',
        }),
        row({
          section: SECTION,
          name: `${bare.name} CPU per call`,
          unit: 'µs',
          value: bare.ok > 0 ? bare.cpuMicros / bare.ok : undefined,
        }),
      );
    }
    ctx.details.gateway = paths.map((p) => ({
      name: p.name,
      calls: p.ok,
      failed: p.failed,
      rps: rps(p),
      latencyMs: p.latencies.summary(),
      singleConnectionMs: p.single.summary(),
      cpuMicrosPerCall: p.ok > 0 ? p.cpuMicros / p.ok : undefined,
      broken: broken.get(p.name),
    }));
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install.close();
    await unpacedInstall.close();
  }
}

/** Gives the install's bot these `outbound` keys (the install writes its config itself). */
function setOutbound(configPath: string, outbound: Record<string, unknown>): void {
  const config = parse(readFileSync(configPath, 'utf8')) as { bots: Record<string, unknown>[] };
  for (const bot of config.bots) bot.outbound = outbound;
  writeFileSync(configPath, stringify(config));
}

function path(name: string, url: string, headers: Record<string, string>, pid?: number): Path {
  return {
    name,
    url,
    headers,
    body: MESSAGE,
    pid,
    ok: 0,
    failed: 0,
    durationMs: 0,
    cpuMicros: 0,
    latencies: new Samples(1 << 16),
    single: new Samples(1 << 12),
  };
}

/** Calls per one-connection turn: about `singleSec` in all at a few thousand a second. */
function singleCalls(singleSec: number): number {
  return Math.max(50, Math.round((singleSec * 2000) / SINGLE_TURNS));
}

function spec(p: Path, connections: number, durationSec: number): ClosedLoopSpec {
  return {
    url: p.url,
    headers: p.headers,
    body: { kind: 'fixed' as const, body: p.body },
    connections,
    durationSec,
  };
}

async function probe(p: Path): Promise<string | undefined> {
  try {
    const res = await request(p.url, { method: 'POST', headers: p.headers, body: p.body });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `answered ${res.statusCode} ${text.slice(0, 200)}`;
    return undefined;
  } catch (error) {
    return firstLine(error);
  }
}

function missAll(ctx: BenchContext, reason: string): void {
  for (const name of ['messages/send', 'drop-in']) {
    ctx.rows.push(
      failedRow(
        {
          section: SECTION,
          name: `${name} throughput, pacing on vs off`,
          unit: 'req/s',
          target: { kind: 'ratio-at-least', min: 0.85 },
        },
        reason,
      ),
      failedRow(
        {
          section: SECTION,
          name: `${name} p50 added by pacing`,
          unit: 'ms',
          target: { kind: 'added-at-most', max: 0.3, unit: 'ms' },
        },
        reason,
      ),
    );
    ctx.rows.push(
      failedRow(
        {
          section: SECTION,
          name: `${name} throughput`,
          unit: 'req/s',
          target: { kind: 'ratio-at-least', min: 0.7 },
        },
        reason,
      ),
      failedRow(
        {
          section: SECTION,
          name: `${name} added p50`,
          unit: 'ms',
          target: { kind: 'added-at-most', max: 1, unit: 'ms' },
        },
        reason,
      ),
    );
  }
}
