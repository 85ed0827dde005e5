import { CONFIG_DEFAULTS } from '@relaygram/config';
import { BenchChild } from '../harness/bench-child';
import { BENCH_BOT as BOT, withRedisPid } from '../harness/bench-bot';
import type { BenchContext } from '../harness/bench-context';
import type { OpenLoopResult } from '../harness/load-spec';
import { CpuWindow } from '../harness/proc-stats';
import { BENCH_CHATS } from '../harness/update-factory';
import { profileArgs, secret } from '../harness/relaygram-install';
import { commandDelta, parseCommandStats, type CommandCounts } from '../stats/command-stats';
import type { LatencySummary } from '../stats/percentiles';
import {
  drainDepth,
  MAX_IN_FLIGHT,
  postWebhooks,
  summarize,
  type PathRig,
  type RampPath,
} from './end-to-end-path';

const QUEUE = 'b5';
/** The route's default `concurrency`: the deliveries the e2e route has in flight. */
export const B5_CONCURRENCY = CONFIG_DEFAULTS.routeConcurrency;
/** Update ids far from the Relaygram paths' own, so no stream repeats another's. */
const FIRST_ID = 1_000_000_000;

/** B5 at one fixed rate. */
export interface BareAtRate {
  postToReceipt: LatencySummary;
  received: number;
  accepted: number;
  /** CPU µs per accepted update of each process, Redis's when its pid is known. */
  cpuPerUpdate: { webhook?: number; worker?: number; redis?: number };
  /** Redis scripts per accepted update, drain included. */
  redisScripts?: number;
  problems?: string;
}

/**
 * Baseline B5, the bare pipeline: the webhook POSTs of the section's stream into a plain
 * Fastify server that adds a BullMQ job per update (children/b5-webhook.child.ts), and a
 * B2 worker with the route's concurrency POSTing each to the same receiver. It runs the
 * ramp alongside the Relaygram paths, so the sustainable rate has a baseline of the
 * stack alone on the same machine in the same minutes.
 */
export class BarePipelinePath implements RampPath {
  readonly label = 'B5 bare pipeline';
  private nextId = FIRST_ID;

  private constructor(
    private readonly ctx: BenchContext,
    private readonly rig: PathRig,
    private readonly url: string,
    private readonly webhookSecret: string,
    private readonly bullPrefix: string,
    readonly children: readonly BenchChild[],
  ) {}

  /** Starts both halves; throws with whatever started stopped. */
  static async open(ctx: BenchContext, prefix: string, rig: PathRig): Promise<BarePipelinePath> {
    const children: BenchChild[] = [];
    const webhookSecret = secret();
    const bullPrefix = `${prefix}:bull`;
    try {
      const webhook = await BenchChild.start('b5-webhook', {
        name: 'B5-webhook',
        nodeArgs: profileArgs(ctx.options.launch, 'B5-webhook'),
      });
      children.push(webhook);
      const { url } = await webhook.call<{ url: string }>('start', {
        redisUrl: ctx.redis.url,
        prefix: bullPrefix,
        queue: QUEUE,
        bot: BOT,
        secret: webhookSecret,
      });
      const worker = await BenchChild.start('b2-worker', {
        name: 'B5-worker',
        nodeArgs: profileArgs(ctx.options.launch, 'B5-worker'),
      });
      children.push(worker);
      await worker.call('start', {
        redisUrl: ctx.redis.url,
        prefix: bullPrefix,
        queue: QUEUE,
        concurrency: B5_CONCURRENCY,
        target: `${rig.receiverUrl}/telegram/updates`,
      });
      return new BarePipelinePath(ctx, rig, url, webhookSecret, bullPrefix, children);
    } catch (error) {
      await Promise.all(children.map((c) => c.stop()));
      throw error;
    }
  }

  async send(rate: number, durationSec: number): Promise<OpenLoopResult> {
    const result = await postWebhooks(this.rig.generator, {
      baseUrl: this.url,
      webhookSecret: this.webhookSecret,
      stream: { firstId: FIRST_ID, chats: BENCH_CHATS },
      firstId: this.nextId,
      rate,
      durationSec,
    });
    this.nextId += result.idsUsed;
    return result;
  }

  /** Jobs waiting or being POSTed: what is accepted and not delivered yet. */
  async depth(): Promise<number> {
    const key = (list: string) => `${this.bullPrefix}:${QUEUE}:${list}`;
    const [waiting, active] = await Promise.all([
      this.ctx.redis.client.llen(key('wait')),
      this.ctx.redis.client.llen(key('active')),
    ]);
    return waiting + active;
  }

  drain(timeoutMs: number): Promise<boolean> {
    return drainDepth(() => this.depth(), timeoutMs);
  }

  async commandStats(): Promise<CommandCounts> {
    return parseCommandStats(await this.ctx.redis.client.info('commandstats'));
  }

  /**
   * `rate` a second for `seconds`, drained: POST-to-receipt latency as the Relaygram
   * paths' is read, from the same receiver (emptied of their receipts first).
   */
  async atRate(rate: number, seconds: number): Promise<BareAtRate> {
    this.ctx.log(`e2e: ${this.label}: ${rate}/s for ${seconds} s`);
    await this.rig.receiver.call('takeLatencies');
    const [webhook, worker] = this.children.map((c) => c.pid);
    const cpu = new CpuWindow(withRedisPid(this.ctx, [webhook, worker])).start();
    const statsBefore = await this.commandStats();
    const result = await this.send(rate, seconds);
    const drained = await this.drain(30_000);
    const used = cpu.stop();
    const scripts = commandDelta(statsBefore, await this.commandStats()).scripts;
    const perUpdate = (pid: number | undefined) => {
      const micros = pid === undefined ? undefined : used.get(pid);
      return micros === undefined || result.ok === 0 ? undefined : micros / result.ok;
    };
    const { received, latencies } = await this.rig.receiver.call<{
      received: number;
      latencies: Float64Array;
    }>('takeLatencies');
    const problems = [
      result.failed > 0 && `${result.failed} POSTs failed`,
      result.skipped > 0 &&
        `${result.skipped} POSTs not sent when due (${MAX_IN_FLIGHT} in flight)`,
      !drained && 'the queue did not drain within 30 s after the load',
    ].filter(Boolean);
    return {
      postToReceipt: summarize(latencies),
      received,
      accepted: result.ok,
      cpuPerUpdate: {
        webhook: perUpdate(webhook),
        worker: perUpdate(worker),
        redis: perUpdate(this.ctx.redis.pid),
      },
      redisScripts: result.ok ? scripts / result.ok : undefined,
      problems: problems.length ? problems.join('; ') : undefined,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.children.map((c) => c.stop()));
  }
}
