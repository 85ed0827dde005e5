import {
  outboundOf,
  type BotConfig,
  type OutboundConfig,
  type RedisConfig,
} from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { createRedis, type RedisClient } from '@relaygram/queue';
import { retryAfterSeconds, type BudgetKind } from './budget/budget-math';
import { broadcastParams, budgetParams, DEFAULT_TRANSIT_MS } from './budget/budget-params';
import type { BudgetParams } from './budget/budget-params';
import { planCall, type CallPlan } from './budget/call-plan';
import { LocalBudget } from './budget/local-budget';
import type { PauseScope } from './budget/pause-scope';
import { RedisBudget, type SharedDecision } from './redis/redis-budget';
import { withTimeout } from '@relaygram/observability';
import { sleep } from './time';

/** `shared`: budgets in Redis, for every replica; `degraded`: Redis away, this process alone. */
export type PacingMode = 'shared' | 'degraded';

/** What `acquire` decided for one call. */
export type PaceResult =
  /** Not a call that sends or edits a message, or pacing is off for its bot. */
  | { readonly kind: 'unpaced' }
  /** Its slot came (after `waitedMs`): send it now. */
  | {
      readonly kind: 'go';
      readonly plan: CallPlan;
      readonly waitedMs: number;
      /** The budget it waited for; `none` when it went at once. */
      readonly budget: BudgetKind | 'none';
    }
  /** No slot within max_wait: answer Telegram's 429 without calling Telegram. */
  | {
      readonly kind: 'refused';
      readonly plan: CallPlan;
      readonly retryAfter: number;
      readonly budget: BudgetKind;
    }
  /** The caller went away while it waited. */
  | { readonly kind: 'aborted' };

export interface PauseReport {
  scope: PauseScope;
  /** How long the pause lasts from now (ms). */
  pauseMs: number;
}

/** A bot's pauses in force: end times in ms (Redis's clock when shared). */
export interface BotPauses {
  mode: PacingMode;
  now: number;
  botUntil?: number;
  chats: { chat: string; until: number }[];
}

export interface PacerLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export interface OutboundPacerOptions {
  /** Longest a pacing call waits for Redis before this process paces alone (500 ms). */
  redisTimeoutMs?: number;
  /** How often a degraded pacer asks whether Redis is back (1 s). */
  probeEveryMs?: number;
  /** See DEFAULT_TRANSIT_MS. */
  transitMs?: number;
  logger?: PacerLogger;
}

const UNPACED: PaceResult = Object.freeze({ kind: 'unpaced' });
const ABORTED: PaceResult = Object.freeze({ kind: 'aborted' });
/** A slow answer now and then is not an outage: this many in a row, or a lost connection, is. */
const FAILURES_TO_DEGRADE = 3;
/** ioredis states of a connection being made for the first time (not lost and retried). */
const CONNECTING = new Set(['wait', 'connecting', 'connect']);
/**
 * Reservations one call may take: again after a pause found at its slot, or after its
 * process was too busy to send at its slot. Both are rare.
 */
const MAX_ROUNDS = 4;

/**
 * Paces a process's Bot API calls that send or edit messages by their bot's
 * `outbound` budgets. Every call costs one reservation in Redis (the reservations of a
 * busy moment share one script call), and a call that must wait sleeps once until its
 * slot, then checks once that no 429 paused its bot or chat meanwhile. Nothing polls.
 *
 * Redis calls are bounded by `redisTimeoutMs`. When Redis fails (a lost connection, or
 * three slow answers in a row) the pacer turns `degraded`: calls take slots from the
 * process's own budget (the same limits, in memory) and never wait for Redis, while a
 * probe asks Redis every `probeEveryMs`; once it answers, shared pacing resumes.
 */
export class OutboundPacer {
  readonly #shared: RedisBudget;
  readonly #local = new LocalBudget();
  readonly #params = new WeakMap<OutboundConfig, BudgetParams>();
  readonly #broadcastParams = new WeakMap<OutboundConfig, BudgetParams>();
  readonly #timeoutMs: number;
  readonly #probeEveryMs: number;
  readonly #transitMs: number;
  readonly #logger?: PacerLogger;
  #mode: PacingMode = 'shared';
  #failures = 0;
  #probe?: NodeJS.Timeout;
  #whenReady?: Promise<void>;
  #closed = false;

  constructor(
    private readonly redis: RedisClient,
    keys: OutboundKeys,
    options: OutboundPacerOptions = {},
    private readonly ownsRedis = false,
  ) {
    this.#timeoutMs = options.redisTimeoutMs ?? 500;
    this.#shared = new RedisBudget(redis, keys, this.#timeoutMs);
    this.#probeEveryMs = options.probeEveryMs ?? 1_000;
    this.#transitMs = options.transitMs ?? DEFAULT_TRANSIT_MS;
    this.#logger = options.logger;
  }

  /** A pacer with a Redis connection of its own (fail-fast: no offline queue), closed by `close`. */
  static connect(
    redis: RedisConfig,
    options: OutboundPacerOptions & { connectionName?: string } = {},
  ): OutboundPacer {
    const client = createRedis(redis.url, {
      connectionName: options.connectionName,
      mode: 'request',
    });
    return new OutboundPacer(client, new OutboundKeys(redis.prefix), options, true);
  }

  get mode(): PacingMode {
    return this.#mode;
  }

  /** The budget arithmetic's view of a bot's config. */
  params(bot: Pick<BotConfig, 'outbound'>): BudgetParams {
    const outbound = outboundOf(bot);
    let params = this.#params.get(outbound);
    if (!params) {
      params = budgetParams(outbound, this.#transitMs);
      this.#params.set(outbound, params);
    }
    return params;
  }

  /** `params` for a broadcast's sends: the bot's calendar with `broadcastShare` of each bin. */
  broadcastParams(bot: Pick<BotConfig, 'outbound'>): BudgetParams {
    const outbound = outboundOf(bot);
    let params = this.#broadcastParams.get(outbound);
    if (!params) {
      params = broadcastParams(this.params(bot), outbound.broadcastShare);
      this.#broadcastParams.set(outbound, params);
    }
    return params;
  }

  /**
   * Takes a slot for a call before it goes to Telegram; resolves when it may go (or
   * must be refused). `signal` ends the wait when the caller goes away; given as a
   * function, it is only made when the call has to wait.
   */
  acquire(
    bot: BotConfig,
    method: string,
    params: Readonly<Record<string, unknown>>,
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<PaceResult> {
    return this.#acquire(bot, method, params, signal, false);
  }

  /**
   * `acquire` for one send of a broadcast: the same budgets, but a slot only in a bin of
   * the bot's calendar that it leaves within `outbound.broadcastShare` of its capacity,
   * so the rest of every bin stays for interactive calls (see broadcastParams). A share
   * of 0 refuses every broadcast, with a retry_after of about max_wait.
   */
  acquireBroadcast(
    bot: BotConfig,
    method: string,
    params: Readonly<Record<string, unknown>>,
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<PaceResult> {
    return this.#acquire(bot, method, params, signal, true);
  }

  async #acquire(
    bot: BotConfig,
    method: string,
    params: Readonly<Record<string, unknown>>,
    signal: AbortSignal | (() => AbortSignal) | undefined,
    broadcast: boolean,
  ): Promise<PaceResult> {
    if (!outboundOf(bot).enabled) return UNPACED;
    const plan = planCall(method, params);
    if (!plan.paced) return UNPACED;
    const p = broadcast ? this.broadcastParams(bot) : this.params(bot);
    const start = Date.now();
    const deadline = start + p.maxWaitMs;
    let budget: BudgetKind | undefined;
    let retriedLate = false;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const window = round === 0 ? p : { ...p, maxWaitMs: Math.max(0, deadline - Date.now()) };
      // When it was decided, on this process's clock: for Redis, when it was asked for
      // (Redis decided a little later, so the call's lateness is never underestimated).
      let decidedAt = round === 0 ? start : Date.now();
      let decision: SharedDecision;
      if (this.#mode === 'shared') {
        try {
          // RedisBudget bounds each reservation itself (one timer for all of them);
          // only a connection not ready yet needs #bounded, to be waited for.
          decision = await (this.redis.status === 'ready'
            ? this.#shared.reserve(bot.id, plan, window)
            : this.#bounded(() => this.#shared.reserve(bot.id, plan, window)));
          this.#failures = 0;
        } catch (error) {
          this.#failed(error);
          decidedAt = Date.now();
          decision = this.#reserveLocally(bot.id, plan, window, decidedAt);
        }
      } else {
        decision = this.#reserveLocally(bot.id, plan, window, decidedAt);
      }
      if (!decision.ok) {
        return {
          kind: 'refused',
          plan,
          retryAfter: retryAfterSeconds(decision.retryInMs, 0),
          budget: budget ?? decision.binding,
        };
      }
      budget ??= decision.binding;
      if (decision.waitMs > 0) {
        const abort = typeof signal === 'function' ? signal() : signal;
        if (!(await sleep(decision.waitMs, abort))) return ABORTED;
        // A 429 another replica met while this call slept pauses it too.
        const pausedFor = await this.#pausedFor(bot.id, plan.chat?.key);
        if (pausedFor > 0) {
          budget = 'pause';
          continue;
        }
      }
      // The budgets allow for a send landing `transitMs` after its slot. A process kept
      // busy past that (a long GC, a starved CPU) would send late and close up on the
      // sends after it: it takes a new slot instead, once; a Redis that is merely slow
      // to answer every time must not turn every call away.
      const late = Date.now() - decidedAt - decision.waitMs > p.transitMs;
      if (late && !retriedLate) {
        retriedLate = true;
        continue;
      }
      // Never later than max_wait after the call asked, whatever held this process up.
      if (Date.now() > deadline + p.transitMs) break;
      return this.#go(plan, start, budget);
    }
    return { kind: 'refused', plan, retryAfter: 1, budget: budget ?? 'bot' };
  }

  /**
   * A Telegram 429 on a paced call: pauses its chat, or the whole bot, for every
   * replica (see budget/pause-scope.ts), and in this process for when Redis is away.
   */
  async reportTooManyRequests(
    bot: BotConfig,
    plan: CallPlan,
    retryAfterSeconds: number,
  ): Promise<PauseReport> {
    const retryAfterMs = Math.max(1, retryAfterSeconds) * 1000;
    const local = this.#local.pause(bot.id, plan.chat?.key, retryAfterMs, Date.now());
    if (this.#mode === 'shared') {
      try {
        const shared = await this.#bounded(() =>
          this.#shared.pause(bot.id, plan.chat?.key, retryAfterMs),
        );
        return shared;
      } catch (error) {
        this.#failed(error);
      }
    }
    return { scope: local.scope, pauseMs: retryAfterMs };
  }

  /** The pauses in force on a bot: from Redis, or this process's own while degraded. */
  async pauses(botId: string): Promise<BotPauses> {
    if (this.#mode === 'shared') {
      try {
        const shared = await this.#bounded(() => this.#shared.pauses(botId));
        return { mode: 'shared', ...shared };
      } catch (error) {
        this.#failed(error);
      }
    }
    const now = Date.now();
    const local = this.#local.pauses(botId, now);
    return {
      mode: 'degraded',
      now,
      chats: local.chats,
      ...(local.botUntil ? { botUntil: local.botUntil } : {}),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#probe);
    this.#probe = undefined;
    if (this.ownsRedis) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  #go(plan: CallPlan, start: number, budget: BudgetKind | undefined): PaceResult {
    return { kind: 'go', plan, waitedMs: Date.now() - start, budget: budget ?? 'none' };
  }

  /** A reservation from this process's own budget (Redis away, or failing this call). */
  #reserveLocally(botId: string, plan: CallPlan, p: BudgetParams, now: number): SharedDecision {
    const local = this.#local.reserve(botId, plan, p, now);
    if (!local.ok) return { ok: false, retryInMs: local.retryAt - now, binding: local.binding };
    const waitMs = Math.ceil(local.slot - now);
    return local.binding ? { ok: true, waitMs, binding: local.binding } : { ok: true, waitMs };
  }

  async #pausedFor(botId: string, chat: string | undefined): Promise<number> {
    if (this.#mode === 'shared') {
      try {
        return await this.#bounded(() => this.#shared.pausedFor(botId, chat));
      } catch (error) {
        this.#failed(error);
      }
    }
    const now = Date.now();
    const until = this.#local.pausedUntil(botId, chat, now);
    return until === undefined ? 0 : until - now;
  }

  /**
   * A Redis call bounded by the timeout. A connection still being made (a process just
   * started) is waited for within that bound; a lost one fails at once.
   */
  #bounded<T>(promise: Promise<T> | (() => Promise<T>)): Promise<T> {
    const run = typeof promise === 'function' ? promise : () => promise;
    const status = this.redis.status;
    if (status === 'ready' || !CONNECTING.has(status)) return withTimeout(run(), this.#timeoutMs);
    this.#whenReady ??= new Promise<void>((resolve) =>
      this.redis.once('ready', () => {
        this.#whenReady = undefined;
        resolve();
      }),
    );
    return withTimeout(
      this.#whenReady.then(() => run()),
      this.#timeoutMs,
    );
  }

  /** One failed Redis call: a lost connection degrades at once, slowness after a few. */
  #failed(error: unknown): void {
    this.#failures++;
    const lost = this.redis.status !== 'ready';
    if (this.#mode === 'degraded' || (!lost && this.#failures < FAILURES_TO_DEGRADE)) return;
    this.#mode = 'degraded';
    this.#logger?.warn(
      { err: error },
      'outbound pacing is degraded: Redis does not answer, each process paces alone until it does',
    );
    this.#startProbe();
  }

  #startProbe(): void {
    if (this.#probe || this.#closed) return;
    let probing = false;
    this.#probe = setInterval(() => {
      if (probing) return;
      probing = true;
      void this.#bounded(() => this.redis.ping())
        .then(
          () => this.#recover(),
          () => undefined,
        )
        .finally(() => (probing = false));
    }, this.#probeEveryMs);
    this.#probe.unref();
  }

  #recover(): void {
    if (this.#mode === 'shared') return;
    clearInterval(this.#probe);
    this.#probe = undefined;
    this.#failures = 0;
    this.#mode = 'shared';
    this.#logger?.info({}, 'outbound pacing is shared again: Redis answers');
  }
}
