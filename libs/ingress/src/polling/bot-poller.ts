import { errorMessage, POLLER_STATES, type PollerState } from '@relaygram/contracts';
import type { RelaygramMetrics } from '@relaygram/observability';
import type { TelegramClients } from '@relaygram/telegram';
import type { Logger } from 'pino';
import type { IngressBots } from '../bots/ingress-bots';
import type { PollingOptions } from '../ingress.options';
import type { UpdateIntake } from '../intake/update-intake';
import { abortableDelay } from '../state/abortable-delay';
import { enqueueBatch, type Batch } from './poll-batch';
import { backoffDelay, classifyPollFailure, type PollFailure } from './poll-failure';
import type { PollerLease } from './poller-lease';

export interface BotPollerDeps {
  bots: IngressBots;
  clients: TelegramClients;
  intake: UpdateIntake;
  lease: PollerLease;
  options: PollingOptions;
  logger: Logger;
  metrics: RelaygramMetrics;
}

/** Where a holder is: the offset that confirms what is stored, and failures in a row. */
interface PollCursor {
  offset: number | undefined;
  failures: number;
}

/**
 * Long-polls getUpdates for one bot while this replica holds the bot's lease, and
 * stands by while another replica does.
 *
 * A batch is enqueued update by update, in getUpdates order, and only then is the next
 * getUpdates sent with `offset = last + 1`, which is what confirms the batch to
 * Telegram. The updates are enqueued one after the other (not pipelined) so that a
 * failure half-way leaves a prefix enqueued, never a gap: the retry re-reads the batch,
 * the prefix comes back `duplicate` and order within each lane holds.
 *
 * Crash analysis: dying before the batch is enqueued loses nothing (Telegram has not
 * been told, the next poller reads the batch again); dying after the enqueue and before
 * the offset is saved makes the next poller read the batch again, and every update is
 * a duplicate; dying after the save is the normal case. The offset is never compared
 * with update ids (Telegram restarts them at a random value after a quiet week): it is
 * always the last update of the last batch, plus one.
 */
export class BotPoller {
  #state: PollerState = 'stopped';
  #problem: string | undefined;
  #since = Date.now();
  private readonly stopController = new AbortController();
  /** Aborted when this replica stops holding the lease (lost it, or stopping). */
  private hold: AbortController | undefined;
  private holding = false;
  private loop: Promise<void> | undefined;
  private lastDeleteWebhookAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly botId: string,
    private readonly deps: BotPollerDeps,
  ) {}

  get state(): PollerState {
    return this.#state;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  /** Whether this replica holds the bot's lease now. */
  get polling(): boolean {
    return this.holding;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops polling: a long poll that is only waiting is aborted, a batch being enqueued
   * is finished and its offset saved, then the lease is released so a standby takes
   * over at once.
   */
  async stop(): Promise<void> {
    this.stopController.abort();
    this.hold?.abort();
    await this.loop;
    this.enter('stopped');
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private get renewEveryMs(): number {
    return Math.max(1, Math.floor(this.deps.lease.ttlMs / 3));
  }

  private async run(): Promise<void> {
    const { lease, logger } = this.deps;
    while (!this.stopping) {
      let acquired = false;
      try {
        acquired = await lease.acquire();
      } catch (error) {
        this.enter('standby', `cannot take the poller lease: Redis: ${errorMessage(error)}`);
      }
      if (!acquired) {
        if (this.#state !== 'standby') this.enter('standby');
        await abortableDelay(this.renewEveryMs, this.stopController.signal);
        continue;
      }
      logger.info({ bot: this.botId }, 'poller lease taken: polling');
      await this.holdLease();
      if (this.stopping) {
        await lease
          .release('stopped')
          .catch((error: unknown) =>
            logger.warn({ bot: this.botId, err: error }, 'poller lease not released'),
          );
      }
    }
  }

  private async holdLease(): Promise<void> {
    const hold = new AbortController();
    this.hold = hold;
    this.holding = true;
    if (this.stopping) hold.abort();
    let lastRenewed = Date.now();
    let renewing = false;
    const renew = async () => {
      if (renewing || hold.signal.aborted) return;
      renewing = true;
      try {
        if (await this.deps.lease.renew()) lastRenewed = Date.now();
        else this.loseLease(hold, 'the lease is held by another replica');
      } catch (error) {
        // A Redis blip is survived while the lease cannot have expired yet.
        if (Date.now() - lastRenewed >= this.deps.lease.ttlMs - this.renewEveryMs) {
          this.loseLease(hold, `cannot renew the lease: Redis: ${errorMessage(error)}`);
        }
      } finally {
        renewing = false;
      }
    };
    const timer = setInterval(() => void renew(), this.renewEveryMs);
    try {
      await this.pollWhileHolding(hold);
    } finally {
      clearInterval(timer);
      this.holding = false;
    }
  }

  private loseLease(hold: AbortController, why: string): void {
    if (hold.signal.aborted) return;
    this.deps.logger.warn({ bot: this.botId }, `poller lease lost (${why}): standing by`);
    this.holding = false;
    hold.abort();
  }

  /**
   * Polls while the lease is ours: fetch a batch, store it, confirm it. A step that
   * fails waits out its backoff and the loop fetches again from the same offset.
   */
  private async pollWhileHolding(hold: AbortController): Promise<void> {
    const cursor = await this.readSavedOffset(hold);
    if (!cursor) return;
    this.enter('polling');
    let polling = true;
    while (polling && !hold.signal.aborted) polling = await this.pollOnce(cursor, hold);
  }

  /** One round; false when this holder stops polling (lease lost, bot removed, stopping). */
  private async pollOnce(cursor: PollCursor, hold: AbortController): Promise<boolean> {
    const batch = await this.fetchBatch(cursor, hold);
    if (batch === 'stop') return false;
    if (batch === 'retry') return true;
    if (batch.updates.length === 0) {
      cursor.failures = 0;
      this.enter('polling');
      return true;
    }
    const next = await this.storeBatch(batch, cursor, hold);
    if (next === undefined) return true;
    // Every update up to `next - 1` is durably enqueued, so the next getUpdates may
    // confirm them whether or not the save below succeeds: the saved offset only
    // spares the next holder a re-read of duplicates.
    cursor.offset = next;
    cursor.failures = 0;
    this.enter('polling');
    return this.saveOffset(next, hold);
  }

  private async readSavedOffset(hold: AbortController): Promise<PollCursor | undefined> {
    try {
      return { offset: await this.deps.lease.readOffset(), failures: 0 };
    } catch (error) {
      this.enter('backoff', `cannot read the saved offset: Redis: ${errorMessage(error)}`);
      await abortableDelay(this.deps.options.networkBackoffMs, hold.signal);
      return undefined;
    }
  }

  /** The next batch from getUpdates; a failure is handled (and waited out) here. */
  private async fetchBatch(
    cursor: PollCursor,
    hold: AbortController,
  ): Promise<Batch | 'retry' | 'stop'> {
    const { options, bots, clients } = this.deps;
    const bot = bots.get(this.botId);
    const client = clients.get(this.botId);
    if (!bot || !client) {
      // Removed by a reload: the adapter stops this poller in a moment.
      await abortableDelay(this.renewEveryMs, hold.signal);
      return 'stop';
    }
    const params: Record<string, unknown> = {
      limit: options.limit,
      timeout: options.timeoutSeconds,
      allowed_updates: [...bot.config.allowedUpdates],
    };
    if (cursor.offset !== undefined) params.offset = cursor.offset;
    try {
      const { updates, texts } = await client.getUpdates(params, { signal: hold.signal });
      if (!Array.isArray(updates)) throw new Error('getUpdates did not answer an array');
      return { updates: updates as unknown[], texts };
    } catch (error) {
      if (hold.signal.aborted) return 'stop';
      cursor.failures++;
      await this.handleFailure(classifyPollFailure(error), cursor.failures, hold);
      return 'retry';
    }
  }

  /** Enqueues the batch; the offset that confirms it, or undefined once a failure is waited out. */
  private async storeBatch(
    batch: Batch,
    cursor: PollCursor,
    hold: AbortController,
  ): Promise<number | undefined> {
    try {
      // Not abortable: a stop finishes the batch it is in.
      return await enqueueBatch(this.deps, this.botId, batch);
    } catch (error) {
      cursor.failures++;
      const delay = this.backoff(cursor.failures);
      this.enter(
        'backoff',
        `cannot store updates: ${errorMessage(error)}; retrying in ${delay} ms`,
      );
      this.deps.logger.warn({ bot: this.botId, err: error }, 'polled batch not stored');
      await abortableDelay(delay, hold.signal);
      return undefined;
    }
  }

  /** Saves the offset for the next holder; false when the save found the lease taken. */
  private async saveOffset(next: number, hold: AbortController): Promise<boolean> {
    try {
      if (await this.deps.lease.saveOffset(next)) return true;
      this.loseLease(hold, 'the offset save found the lease taken');
      return false;
    } catch (error) {
      this.deps.logger.warn({ bot: this.botId, err: error }, 'offset not saved');
      return true;
    }
  }

  private async handleFailure(
    failure: PollFailure,
    failures: number,
    hold: AbortController,
  ): Promise<void> {
    const { options } = this.deps;
    switch (failure.kind) {
      case 'webhook-active':
        return this.deleteWebhook(failure.problem, failures, hold);
      case 'terminated':
        return this.onTerminated(failure, hold);
      case 'unauthorized':
        return this.waitOut(
          'unauthorized',
          failure.problem,
          failure,
          options.unauthorizedBackoffMs,
          hold,
        );
      case 'rate-limited':
        return this.waitOut('backoff', failure.problem, failure, failure.waitMs, hold);
      case 'network': {
        const delay = this.backoff(failures);
        const shown = `${failure.problem}; retrying in ${delay} ms`;
        return this.waitOut('backoff', shown, failure, delay, hold);
      }
    }
  }

  /** Shows the state, logs Telegram's answer and waits (less, if the hold ends). */
  private async waitOut(
    state: PollerState,
    shown: string,
    failure: PollFailure,
    ms: number,
    hold: AbortController,
  ): Promise<void> {
    this.enter(state, shown);
    const level = failure.kind === 'unauthorized' ? 'error' : 'warn';
    this.deps.logger[level]({ bot: this.botId }, `getUpdates: ${failure.problem}`);
    await abortableDelay(ms, hold.signal);
  }

  /** A 409 "webhook is active": deletes the webhook, at most once per `deleteWebhookEveryMs`. */
  private async deleteWebhook(
    problem: string,
    failures: number,
    hold: AbortController,
  ): Promise<void> {
    const { options, logger, clients } = this.deps;
    const since = Date.now() - this.lastDeleteWebhookAt;
    if (since < options.deleteWebhookEveryMs) {
      const wait = options.deleteWebhookEveryMs - since;
      this.enter(
        'conflict',
        `${problem}; it was deleted less than ${Math.round(options.deleteWebhookEveryMs / 1000)} s ago, polling again in ${Math.ceil(wait / 1000)} s`,
      );
      await abortableDelay(wait, hold.signal);
      return;
    }
    this.lastDeleteWebhookAt = Date.now();
    logger.warn(
      { bot: this.botId },
      'getUpdates: a webhook is set for this polling bot; deleting it (pending updates are kept)',
    );
    try {
      await clients
        .get(this.botId)
        ?.call('deleteWebhook', { drop_pending_updates: false }, { signal: hold.signal });
    } catch (error) {
      if (hold.signal.aborted) return;
      this.enter('backoff', `deleteWebhook failed: ${errorMessage(error)}`);
      await abortableDelay(this.backoff(failures), hold.signal);
    }
  }

  /** A 409 "terminated by other getUpdates": a conflict while the lease is still ours. */
  private async onTerminated(failure: PollFailure, hold: AbortController): Promise<void> {
    let ours = false;
    try {
      ours = await this.deps.lease.renew();
    } catch {
      // Unknown: treated as lost, the standby loop finds out.
    }
    if (!ours) {
      this.loseLease(hold, 'another replica polls');
      return;
    }
    await this.waitOut(
      'conflict',
      failure.problem,
      failure,
      this.deps.options.conflictBackoffMs,
      hold,
    );
  }

  private backoff(failures: number): number {
    const { networkBackoffMs, networkBackoffMaxMs } = this.deps.options;
    return backoffDelay(failures, networkBackoffMs, networkBackoffMaxMs);
  }

  private enter(state: PollerState, problem?: string): void {
    if (state === this.#state && problem === this.#problem) return;
    this.#state = state;
    this.#problem = problem;
    this.#since = Date.now();
    const { metrics, lease, logger } = this.deps;
    for (const s of POLLER_STATES)
      metrics.pollerState.labels(this.botId, s).set(s === state ? 1 : 0);
    if (state !== 'standby' && state !== 'stopped') {
      metrics.botHealthy.labels(this.botId).set(state === 'polling' ? 1 : 0);
    }
    if (this.holding && state !== 'standby') {
      lease
        .publish(state, problem, this.#since)
        .catch((error: unknown) =>
          logger.debug({ bot: this.botId, err: error }, 'poller state not published'),
        );
    }
  }
}
