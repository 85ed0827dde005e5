import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService, type BotConfig, type RelaygramConfig } from '@relaygram/config';
import { BROADCAST_CONCURRENCY, type BroadcastCall } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { OutboundPacer } from '@relaygram/pacing';
import { BroadcastStore, type ClaimedRecipient, type RecipientResult } from '@relaygram/queue';
import type { TelegramClient } from '@relaygram/telegram';
import type { Logger } from 'pino';
import {
  DISPATCHER_LOGGER,
  DISPATCHER_OPTIONS,
  type ResolvedDispatcherOptions,
} from '../dispatcher-options';
import { BroadcastCaller, type SendHandle } from './broadcast-caller';
import { BroadcastOutcomes, type BroadcastRef } from './broadcast-outcomes';
import { logEnded, refreshPending } from './broadcast-progress';
import { BotClients } from '../telegram/bot-clients';
import { RefusedTokenPause } from './refused-token-pause';
import { chatIdOf, sharesOf } from './claim-plan';
import { SettleBatcher } from './settle-batcher';
import { ThrottledLog } from './throttled-log';

/** Running broadcasts are listed again at most this often while none has anything to claim. */
export const BROADCAST_LIST_EVERY_MS = 500;

/** Slots freed before the next claim: one claim script per few sends, not per send. */
export const BROADCAST_CLAIM_MIN = 16;

/**
 * A send waits at most this long for its pacing slot (whatever the bot's max_wait), then
 * is retried: its claim's lease (60 s) must outlast the wait, the call (15 s) and the
 * settle, or another dispatcher would claim it again while it is being sent.
 */
export const BROADCAST_PACING_DEADLINE_MS = 30_000;

/** Keep-alive connections per bot: broadcasts run up to 2,000 sends a second. */
const BROADCAST_CONNECTIONS = 32;

/** claimed: again at once; held: no slot or room, again when a send ends; idle: nothing to claim. */
type RoundResult = 'claimed' | 'held' | 'idle';

interface InFlight {
  key: string;
  bot: string;
  called: Promise<unknown>;
  done: Promise<void>;
}

/**
 * Sends the running broadcasts of every bot (issue 16), on every dispatcher process.
 * A loop claims recipients (BroadcastStore.claim, each claim a 60 s lease) up to its
 * free slots, BROADCAST_CONCURRENCY in flight at most over all broadcasts, shared
 * fairly among them; each recipient takes a broadcast slot of its bot's pacing
 * (`outbound.broadcast_share` of each bin), then the Bot API call (BroadcastCaller);
 * the answers become results (BroadcastOutcomes), settled in batches (SettleBatcher).
 * A recipient holds its slot until its result is settled. So a broadcast runs at its
 * pacing's rate, with at most 64 recipients (and about a second of its bot's budget)
 * claimed ahead, and a killed process leaves at most 64 to be claimed, and maybe sent,
 * again.
 *
 * A paused or cancelled broadcast leaves the running set: it is not claimed any more,
 * and its sends still waiting for a slot are released (claimable at once on resume).
 * Shutdown: no more claims; sends waiting for a slot are released; calls in flight get
 * `shutdownGraceMs`, then are cut and released too. A cut call may have reached
 * Telegram, so its recipient may get the message twice: that, and a process killed
 * with sends in flight (their leases run out, then they are claimed again), is the
 * documented window of duplicates. Every result is settled before the process exits.
 */
@Injectable()
export class BroadcastRunner {
  #config: RelaygramConfig;
  readonly #bots: BotClients;
  readonly #logger: Logger;
  readonly #log: ThrottledLog;
  readonly #caller: BroadcastCaller;
  readonly #outcomes: BroadcastOutcomes;
  readonly #batcher: SettleBatcher;
  /**
   * Recipients in flight, each with its broadcast (`bot/id`): `called` once its call
   * ended, `done` once its result is settled. Its slot is held until then.
   */
  readonly #sends = new Map<SendHandle, InFlight>();
  /** Broadcasts this process has seen running: a line when each starts and ends. */
  readonly #running = new Set<string>();
  readonly #refusedToken: RefusedTokenPause;
  /** Broadcasts that had nothing to claim, not claimed again before then. */
  readonly #quietUntil = new Map<string, number>();
  readonly #stop = new AbortController();
  #slotFreed: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #turn = 0;

  constructor(
    @Inject(ConfigService) { config }: Pick<ConfigService, 'config'>,
    private readonly store: BroadcastStore,
    pacer: OutboundPacer,
    private readonly metrics: RelaygramMetrics,
    @Inject(DISPATCHER_OPTIONS) private readonly options: ResolvedDispatcherOptions,
    @Inject(DISPATCHER_LOGGER) logger: Logger,
  ) {
    this.#config = config;
    this.#logger = logger;
    this.#log = new ThrottledLog(logger);
    this.#caller = new BroadcastCaller(pacer, metrics, this.#log, () => this.#stopping);
    this.#refusedToken = new RefusedTokenPause(store, logger, this.#log);
    this.#outcomes = new BroadcastOutcomes(metrics, this.#log, (b, reason) =>
      this.#refusedToken.pause(b, reason),
    );
    this.#batcher = new SettleBatcher(
      (bot, id, results) => store.settle(bot, id, results),
      (error, bot, id, results) =>
        this.#log.warn(
          `${bot}/${id}/settle`,
          { bot, broadcast_id: id, results, err: error },
          'broadcast results not settled yet, will try again',
        ),
      // Slots are held until their results are settled: a flush per claim's worth.
      { maxWaiting: BROADCAST_CLAIM_MIN },
    );
    this.#bots = new BotClients(config, metrics, logger, {
      user: 'broadcasts',
      connections: BROADCAST_CONNECTIONS,
    });
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  start(): void {
    if (this.#loop || this.#stopping) return;
    this.metrics.addScrapeHook(this, () =>
      refreshPending(this.store, this.metrics, this.#config.bots),
    );
    this.#loop = this.#run();
  }

  /** The bots of a reloaded config (as OutboxSender). */
  async reload(config: RelaygramConfig): Promise<void> {
    this.#config = config;
    await this.#bots.reload(config);
  }

  /** Shutdown (see the class): resolves once every result is settled and the clients closed. */
  stop(): Promise<void> {
    this.#stopped ??= this.#shutdown();
    return this.#stopped;
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      await this.#waitForRoom();
      if (this.#stopping) break;
      let round: RoundResult | { idleMs: number } = 'idle';
      try {
        round = await this.#round();
      } catch (error) {
        this.#log.warn('round', { err: error }, 'broadcasts not claimed: Redis does not answer');
      }
      if (round === 'claimed') continue;
      if (round === 'held') {
        await this.#sendEnded(BROADCAST_LIST_EVERY_MS);
        continue;
      }
      const idleMs = typeof round === 'object' ? round.idleMs : BROADCAST_LIST_EVERY_MS;
      await sleep(idleMs, undefined, { signal: this.#stop.signal }).catch(() => undefined);
    }
  }

  /** Until BROADCAST_CLAIM_MIN slots are free, or a listing is due. */
  async #waitForRoom(): Promise<void> {
    const until = Date.now() + BROADCAST_LIST_EVERY_MS;
    while (!this.#stopping && this.#sends.size > BROADCAST_CONCURRENCY - BROADCAST_CLAIM_MIN) {
      const left = until - Date.now();
      if (left <= 0) return;
      await this.#sendEnded(left);
    }
  }

  /** Until the next send ends (or shutdown), at most `ms`. */
  async #sendEnded(ms: number): Promise<void> {
    if (this.#stopping) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#slotFreed = done;
    });
    this.#slotFreed = undefined;
  }

  /** One listing of the running broadcasts, and claims for the free slots shared among them. */
  async #round(): Promise<RoundResult | { idleMs: number }> {
    const listed = await this.store.running();
    const now = Date.now();
    this.#cull(listed, now);
    const free = BROADCAST_CONCURRENCY - this.#sends.size;
    if (free <= 0) return 'held';
    if (!this.#bots.built) return 'idle';
    const ready = listed.filter((b) => (this.#quietUntil.get(keyOf(b)) ?? 0) <= now);
    if (ready.length === 0) {
      const next = Math.min(...listed.map((b) => this.#quietUntil.get(keyOf(b)) ?? now));
      return { idleMs: Math.max(10, Math.min(BROADCAST_LIST_EVERY_MS, next - now)) };
    }
    const shares = sharesOf(ready, this.#sends.values(), this.#config.bots, free, this.#turn++);
    const claimed = await Promise.all(
      ready.map((b, i) => (shares[i] > 0 ? this.#claim(b, shares[i]) : 0)),
    );
    if (claimed.some((n) => n > 0)) return 'claimed';
    // Broadcasts that got no share (their bot's room is used up) wait for a send to end.
    return shares.some((n, i) => n === 0 && !this.#quietUntil.has(keyOf(ready[i])))
      ? 'held'
      : 'idle';
  }

  /**
   * Broadcasts no longer running (paused, cancelled, done): their sends waiting for a
   * slot are released. Sends that waited too long for one are retried.
   */
  #cull(listed: readonly BroadcastRef[], now: number): void {
    const live = new Set(listed.map(keyOf));
    for (const key of this.#running) if (!live.has(key)) this.#ended(key);
    for (const key of this.#quietUntil.keys()) if (!live.has(key)) this.#quietUntil.delete(key);
    for (const [handle, send] of this.#sends) {
      if (handle.phase !== 'pacing' || handle.controller.signal.aborted) continue;
      if (!live.has(send.key)) {
        handle.controller.abort();
      } else if (now - handle.startedAt > BROADCAST_PACING_DEADLINE_MS) {
        handle.expired = true;
        handle.controller.abort();
      }
    }
  }

  /** Claims up to `max` recipients and starts their sends; how many (0: nothing to claim). */
  async #claim(b: BroadcastRef, max: number): Promise<number> {
    const key = keyOf(b);
    const claim = await this.store.claim(b.bot, b.id, max).catch((error: unknown) => {
      this.#log.warn(
        `${key}/claim`,
        { bot: b.bot, broadcast_id: b.id, err: error },
        'broadcast not claimed',
      );
      return undefined;
    });
    if (!claim) return 0;
    if (claim.status !== 'running') {
      if (this.#running.has(key)) this.#ended(key);
      return 0;
    }
    if (!this.#running.has(key)) {
      this.#running.add(key);
      // Running again (resumed): a refused token pauses it again.
      this.#refusedToken.forget(key);
      this.#logger.info(
        { bot: b.bot, broadcast_id: b.id, method: claim.call.method },
        'broadcast sending',
      );
    }
    if (claim.recipients.length === 0) {
      this.#quietUntil.set(key, Date.now() + BROADCAST_LIST_EVERY_MS);
      return 0;
    }
    this.#quietUntil.delete(key);
    const bot = this.#bots.bot(b.bot);
    const client = this.#bots.client(b.bot);
    for (const r of claim.recipients) {
      if (!bot) this.#batcher.add(b.bot, b.id, this.#outcomes.unconfigured(b, r));
      else if (!client) this.#batcher.add(b.bot, b.id, this.#outcomes.noClient(b, r));
      else this.#start(b, key, bot, client, claim.call, r);
    }
    return claim.recipients.length;
  }

  #start(
    b: BroadcastRef,
    key: string,
    bot: BotConfig,
    client: TelegramClient,
    call: BroadcastCall,
    r: ClaimedRecipient,
  ): void {
    const handle: SendHandle = {
      controller: new AbortController(),
      phase: 'pacing',
      startedAt: Date.now(),
    };
    const called = this.#send(b, bot, client, call, r, handle);
    const done = called
      .then((result) => this.#batcher.add(b.bot, b.id, result))
      .finally(() => {
        this.#sends.delete(handle);
        this.#slotFreed?.();
      });
    this.#sends.set(handle, { key, bot: b.bot, called, done });
  }

  /** The recipient's result, once its call ended (never rejects). */
  async #send(
    b: BroadcastRef,
    bot: BotConfig,
    client: TelegramClient,
    call: BroadcastCall,
    r: ClaimedRecipient,
    handle: SendHandle,
  ): Promise<RecipientResult> {
    try {
      const called = await this.#caller.send(bot, client, call, chatIdOf(r.chatId), handle);
      if (called === 'aborted') return { index: r.index, outcome: 'release' };
      return this.#outcomes.of(b, r, called);
    } catch (error) {
      this.#log.warn(
        `${keyOf(b)}/bug`,
        { bot: b.bot, broadcast_id: b.id, err: error },
        'broadcast send failed unexpectedly, will retry',
      );
      return { index: r.index, outcome: 'retry', dueAt: Date.now() + 5_000 };
    }
  }

  /** A line when a broadcast this process was sending stops running, with its totals. */
  #ended(key: string): void {
    this.#running.delete(key);
    this.#quietUntil.delete(key);
    this.#refusedToken.forget(key);
    this.#log.forget(`${key}/`);
    const slash = key.indexOf('/');
    void logEnded(this.store, this.#logger, key.slice(0, slash), key.slice(slash + 1));
  }

  async #shutdown(): Promise<void> {
    this.#stop.abort();
    this.#slotFreed?.();
    await this.#loop;
    for (const handle of this.#sends.keys()) {
      if (handle.phase === 'pacing') handle.controller.abort();
    }
    if (!(await this.#called(this.options.shutdownGraceMs))) {
      this.#logger.warn(
        { sends: this.#sends.size },
        'broadcast calls still in flight at shutdown were cut: they may have been sent, and go again',
      );
      for (const handle of this.#sends.keys()) handle.controller.abort();
      await this.#called(Number.POSITIVE_INFINITY);
    }
    // Every call has ended: its result is settled now, or given up on (then its
    // recipient goes again once its claim runs out).
    const unsettled = await this.#batcher.close();
    await Promise.all([...this.#sends.values()].map((send) => send.done));
    if (unsettled > 0) {
      this.#logger.error(
        { results: unsettled },
        'broadcast results not settled at shutdown: their recipients go again once their claims run out',
      );
    }
    this.metrics.removeScrapeHook(this);
    await this.#bots.close(1_000);
  }

  /** Whether every call in flight ended within `ms`. */
  async #called(ms: number): Promise<boolean> {
    const all = Promise.all([...this.#sends.values()].map((send) => send.called)).then(() => true);
    if (!Number.isFinite(ms)) return all;
    const timeout = new AbortController();
    const late = sleep(ms, false, { signal: timeout.signal }).catch(() => false);
    try {
      return await Promise.race([all, late]);
    } finally {
      timeout.abort();
    }
  }
}

function keyOf(b: BroadcastRef): string {
  return `${b.bot}/${b.id}`;
}
