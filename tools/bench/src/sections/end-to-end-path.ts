import { RedisKeys } from '@relaygram/contracts';
import type { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, benchBot } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { OpenLoopResult, OpenLoopSpec } from '../harness/load-spec';
import { RelaygramInstall, secret, type AppProcess } from '../harness/relaygram-install';
import { BENCH_CHATS, type UpdateStream } from '../harness/update-factory';
import { parseCommandStats, type CommandCounts } from '../stats/command-stats';
import { Samples, type LatencySummary } from '../stats/percentiles';

/** Telegram opens at most 100 connections to a webhook (max_connections). */
export const MAX_IN_FLIGHT = 100;
const ROUTE = 'e2e';

/** The processes every run of the section shares: the receiver and the load generator. */
export interface PathRig {
  receiver: BenchChild;
  receiverUrl: string;
  generator: BenchChild;
}

/**
 * An install of the section's bot and `chat` route under `prefix`, with `configKeys`
 * added to its config, and its ingress and dispatcher started (`label` names the path
 * in the log and its apps' profiles). Throws when an app does not start, with the
 * install closed.
 */
export async function openPath(
  ctx: BenchContext,
  prefix: string,
  rig: PathRig,
  label: string,
  configKeys: Record<string, unknown> = {},
): Promise<{ install: RelaygramInstall; path: RunningPath }> {
  const webhookSecret = secret();
  const install = new RelaygramInstall(
    prefix,
    ctx.redis.url,
    ctx.emulator.apiRoot,
    benchBot(ctx, webhookSecret),
    [{ name: ROUTE, targetUrl: `${rig.receiverUrl}/telegram/updates`, ordering: 'chat' }],
  );
  try {
    install.configure(configKeys);
    const profile = `e2e-${label}`;
    const ingress = await install.start('ingress', ctx.options.launch, `${profile}-ingress`);
    const dispatcher = await install.start(
      'dispatcher',
      ctx.options.launch,
      `${profile}-dispatcher`,
    );
    const stream: UpdateStream = { firstId: 1, chats: BENCH_CHATS };
    const depthKey = new RedisKeys(prefix).botStats(BOT);
    const apps = { ingress, dispatcher };
    const path = new RunningPath(ctx, label, apps, rig, stream, webhookSecret, depthKey);
    return { install, path };
  } catch (error) {
    await install.close();
    throw error;
  }
}

/** What the ramp drives: webhook POSTs at a rate, and the depth of what is not delivered yet. */
export interface RampPath {
  readonly label: string;
  send(rate: number, durationSec: number): Promise<OpenLoopResult>;
  depth(): Promise<number>;
  drain(timeoutMs: number): Promise<boolean>;
  commandStats(): Promise<CommandCounts>;
}

/** The section's bot's webhook under `baseUrl`, POSTed by the open-loop generator. */
export function postWebhooks(
  generator: BenchChild,
  run: {
    baseUrl: string;
    webhookSecret: string;
    stream: UpdateStream;
    firstId: number;
    rate: number;
    durationSec: number;
  },
): Promise<OpenLoopResult> {
  const spec: OpenLoopSpec = {
    url: `${run.baseUrl}/webhooks/telegram/${BOT}`,
    headers: { 'x-telegram-bot-api-secret-token': run.webhookSecret },
    stream: run.stream,
    firstId: run.firstId,
    rate: run.rate,
    durationSec: run.durationSec,
    maxInFlight: MAX_IN_FLIGHT,
  };
  return generator.call<OpenLoopResult>('run', spec);
}

/** Polls `depth` until it reads 0, or `timeoutMs` has passed (false). */
export async function drainDepth(
  depth: () => Promise<number>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while ((await depth()) > 0) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * The path under test once it runs: its two apps, the load generator and the receiver,
 * and the next update_id to send, so that every run of the section's stream is fresh.
 */
export class RunningPath implements RampPath {
  private nextId: number;

  readonly ingress: AppProcess;
  readonly dispatcher: AppProcess;

  constructor(
    private readonly ctx: BenchContext,
    readonly label: string,
    apps: { ingress: AppProcess; dispatcher: AppProcess },
    private readonly rig: PathRig,
    private readonly stream: UpdateStream,
    private readonly webhookSecret: string,
    private readonly depthKey: string,
  ) {
    this.nextId = stream.firstId;
    this.ingress = apps.ingress;
    this.dispatcher = apps.dispatcher;
  }

  get receiver(): BenchChild {
    return this.rig.receiver;
  }

  get pids(): { ingress: number; dispatcher: number } {
    return { ingress: this.ingress.pid, dispatcher: this.dispatcher.pid };
  }

  /** Webhook POSTs at `rate` a second for `durationSec`, each with a fresh update_id. */
  async send(rate: number, durationSec: number): Promise<OpenLoopResult> {
    const result = await postWebhooks(this.rig.generator, {
      baseUrl: this.ingress.url,
      webhookSecret: this.webhookSecret,
      stream: this.stream,
      firstId: this.nextId,
      rate,
      durationSec,
    });
    this.nextId += result.idsUsed;
    return result;
  }

  async depth(): Promise<number> {
    return Number((await this.ctx.redis.client.hget(this.depthKey, 'queued')) ?? 0);
  }

  drain(timeoutMs: number): Promise<boolean> {
    return drainDepth(() => this.depth(), timeoutMs);
  }

  async commandStats(): Promise<CommandCounts> {
    return parseCommandStats(await this.ctx.redis.client.info('commandstats'));
  }

  /** The receiver's POST-to-receipt latencies since its last reset, and how many arrived. */
  async takeLatencies(): Promise<{ received: number; summary: LatencySummary }> {
    const { received, latencies } = await this.takeLatencySamples();
    return { received, summary: summarize(latencies) };
  }

  /** The same, each latency, for runs whose rounds are summarised together. */
  takeLatencySamples(): Promise<{ received: number; latencies: Float64Array }> {
    return this.receiver.call('takeLatencies');
  }
}

export function summarize(...parts: Float64Array[]): LatencySummary {
  const samples = new Samples(parts.reduce((n, p) => n + p.length, 0));
  for (const part of parts) samples.addAll(part);
  return samples.summary();
}
