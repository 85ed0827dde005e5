import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'undici';
import { parse, stringify } from 'yaml';
import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import type { ClosedLoopSpec, LoadResult } from '../harness/load-spec';
import { CpuWindow, RssSampler, scrapeHeap } from '../harness/proc-stats';
import { RelaygramInstall, profileArgs, type AppProcess } from '../harness/relaygram-install';
import { firstLine } from '../report/results';
import { Samples } from '../stats/percentiles';
import { CONNECTIONS, missAll, reportRows, type GatewayPaths, type Path } from './gateway-report';

/** Turns of the one-connection measurement of pacing on and off. */
const SINGLE_TURNS = 10;
const MESSAGE = JSON.stringify({
  chat_id: 100000042,
  text: 'Your order #48213 has shipped. Track it here: https://shop.example/track/48213',
});

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
  const clientToken = randomBytes(24).toString('base64url');
  const install = gatewayInstall(ctx, 'gateway', clientToken, ROOMY_OUTBOUND);
  const unpacedInstall = gatewayInstall(
    ctx,
    'gateway-unpaced',
    clientToken,
    ctx.options.sameSides ? ROOMY_OUTBOUND : { enabled: false },
  );
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
      apiRoot: ctx.emulator.apiRoot,
      token: ctx.emulator.bot.token,
    });
    const paths = gatewayPaths(ctx, clientToken, gateway, unpaced, {
      url: proxyUrl,
      pid: proxy.pid,
    });
    const broken = await probeAll(paths);
    if (broken.has('direct')) {
      missAll(ctx, `the emulator itself failed: ${broken.get('direct')}`);
      return;
    }
    const rss = new RssSampler([gateway.pid, unpaced.pid, proxy.pid]).start();
    await new GatewayLoad(ctx, load).run(paths, broken);
    ctx.heap.gateway = await scrapeHeap(gateway.adminUrl);
    const peaks = rss.stop();
    ctx.rss.gateway = peaks.get(gateway.pid);
    ctx.referenceRss.B4 = peaks.get(proxy.pid);
    ctx.idleRss.gateway = gateway.idleRssBytes;
    reportRows(ctx, paths, broken);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await install.close();
    await unpacedInstall.close();
  }
}

/** A gateway's install under a prefix of its own, its bot given these `outbound` keys. */
function gatewayInstall(
  ctx: BenchContext,
  suffix: string,
  clientToken: string,
  outbound: Record<string, unknown>,
): RelaygramInstall {
  const install = new RelaygramInstall(
    `${ctx.runPrefix}-${suffix}`,
    ctx.redis.url,
    ctx.emulator.apiRoot,
    benchBot(ctx),
    [],
    [{ name: 'bench-client', token: clientToken }],
  );
  setOutbound(install.configPath, outbound);
  return install;
}

/** Each path next to the one it is compared with, so load from elsewhere on the machine hits both alike. */
function gatewayPaths(
  ctx: BenchContext,
  clientToken: string,
  gateway: AppProcess,
  unpaced: AppProcess,
  proxy: { url: string; pid: number },
): GatewayPaths {
  const { bot, apiRoot } = ctx.emulator;
  const numericId = bot.token.split(':')[0];
  const json = { 'content-type': 'application/json' };
  const serviceHeaders = { ...json, 'x-service-token': clientToken };
  return [
    path('direct', `${apiRoot}/bot${bot.token}/sendMessage`, json, ctx.emulator.child.pid),
    path(
      'messages/send',
      `${gateway.url}/api/v1/${BOT}/messages/send`,
      serviceHeaders,
      gateway.pid,
    ),
    path(
      'messages/send, pacing off',
      `${unpaced.url}/api/v1/${BOT}/messages/send`,
      serviceHeaders,
      unpaced.pid,
    ),
    path('drop-in', `${gateway.url}/bot${numericId}:${clientToken}/sendMessage`, json, gateway.pid),
    path(
      'drop-in, pacing off',
      `${unpaced.url}/bot${numericId}:${clientToken}/sendMessage`,
      json,
      unpaced.pid,
    ),
    path('B4 bare proxy', `${proxy.url}/proxy/sendMessage`, json, proxy.pid),
  ];
}

/** What is wrong with each path that did not answer one call with 200, by name. */
async function probeAll(paths: readonly Path[]): Promise<Map<string, string>> {
  const broken = new Map<string, string>();
  for (const p of paths) {
    const problem = await probe(p);
    if (problem) broken.set(p.name, problem);
  }
  return broken;
}

/** The load generator's runs against the paths, added up into each path. */
class GatewayLoad {
  constructor(
    private readonly ctx: BenchContext,
    private readonly load: BenchChild,
  ) {}

  /** Warm-up, then the rounds, over the paths that answered their probe. */
  async run(paths: GatewayPaths, broken: Map<string, string>): Promise<void> {
    const { quick } = this.ctx.options;
    const warmSec = quick ? 2 : 4;
    const runSec = quick ? 4 : 8;
    const singleSec = quick ? 2 : 5;
    const rounds = quick ? 1 : 3;
    const [, rest, restUnpaced, dropIn, dropInUnpaced] = paths;
    const working = paths.filter((p) => !broken.has(p.name));
    for (const p of working) {
      this.ctx.log(`gateway: warming ${p.name} up (${warmSec} s)`);
      await this.load.call<LoadResult>('run', spec(p, CONNECTIONS, warmSec));
    }
    // Pacing on and off of one path are measured in short turns, one after the other,
    // so that load from elsewhere on the machine falls on both sides alike.
    const pairs = new Map<Path, Path>([
      [rest, restUnpaced],
      [dropIn, dropInUnpaced],
    ]);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? working : [...working].reverse();
      for (const p of order) {
        const partner = pairs.get(p);
        if ([...pairs.values()].includes(p)) continue;
        if (partner && working.includes(partner)) {
          this.ctx.log(
            `gateway: round ${round + 1}/${rounds}, ${p.name}, pacing on and off by turns`,
          );
          await this.byTurns(p, partner, runSec, singleSec);
          continue;
        }
        this.ctx.log(
          `gateway: round ${round + 1}/${rounds}, ${p.name} (${runSec} s + ${singleSec} s)`,
        );
        await this.measure(p, runSec);
        await this.measureSingle(p, spec(p, 1, singleSec));
      }
    }
  }

  /** A path and its partner in one-second turns, then in one-connection turns, alternating who goes first. */
  private async byTurns(p: Path, partner: Path, runSec: number, singleSec: number): Promise<void> {
    for (let turn = 0; turn < runSec; turn++) {
      const [first, second] = turn % 2 === 0 ? [p, partner] : [partner, p];
      await this.measure(first, 1);
      await this.measure(second, 1);
    }
    for (let turn = 0; turn < SINGLE_TURNS; turn++) {
      const [first, second] = turn % 2 === 0 ? [p, partner] : [partner, p];
      await this.measureSingle(first, { ...spec(first, 1, 0), amount: singleCalls(singleSec) });
      await this.measureSingle(second, { ...spec(second, 1, 0), amount: singleCalls(singleSec) });
    }
  }

  private async measure(p: Path, seconds: number): Promise<void> {
    const cpu = new CpuWindow(p.pid === undefined ? [] : [p.pid]).start();
    const result = await this.load.call<LoadResult>('run', spec(p, CONNECTIONS, seconds));
    const used = p.pid === undefined ? undefined : cpu.stop().get(p.pid);
    p.ok += result.ok;
    p.failed += result.non2xx + result.errors;
    p.durationMs += result.durationMs;
    p.cpuMicros += used ?? Number.NaN;
    p.latencies.addAll(result.latencies);
  }

  private async measureSingle(p: Path, spec1: ClosedLoopSpec): Promise<void> {
    const single = await this.load.call<LoadResult>('run', spec1);
    p.single.addAll(single.latencies);
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
