import { POLLER_STATES, UpdateSource, type PollerState } from '@relaygram/contracts';
import type { RelaygramMetrics } from '@relaygram/observability';
import type { Update } from '@relaygram/routing';
import type { TelegramClients } from '@relaygram/telegram';
import type { Logger } from 'pino';
import type { IngressBots } from '../bots/ingress-bots';
import type { PollingOptions } from '../ingress.options';
import type { UpdateIntake } from '../intake/update-intake';
import { isUpdateId } from '../intake/update-validation';
import { abortableDelay } from '../state/abortable-delay';
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

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
        this.enter('standby', `cannot take the poller lease: Redis: ${message(error)}`);
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
            logger.warn({ bot: this.botId, err: message(error) }, 'poller lease not released'),
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
          this.loseLease(hold, `cannot renew the lease: Redis: ${message(error)}`);
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

  private async pollWhileHolding(hold: AbortController): Promise<void> {
    const { lease, options, clients } = this.deps;
    let offset: number | undefined;
    let failures = 0;
    try {
      offset = await lease.readOffset();
    } catch (error) {
      this.enter('backoff', `cannot read the saved offset: Redis: ${message(error)}`);
      await abortableDelay(options.networkBackoffMs, hold.signal);
      return;
    }
    this.enter('polling');
    while (!hold.signal.aborted) {
      const bot = this.deps.bots.get(this.botId);
      const client = clients.get(this.botId);
      if (!bot || !client) {
        // Removed by a reload: the adapter stops this poller in a moment.
        await abortableDelay(this.renewEveryMs, hold.signal);
        return;
      }
      let updates: unknown;
      let texts: string[] | undefined;
      try {
        const params: Record<string, unknown> = {
          limit: options.limit,
          timeout: options.timeoutSeconds,
          allowed_updates: [...bot.config.allowedUpdates],
        };
        if (offset !== undefined) params.offset = offset;
        ({ updates, texts } = await client.getUpdates(params, { signal: hold.signal }));
        if (!Array.isArray(updates)) throw new Error('getUpdates did not answer an array');
      } catch (error) {
        if (hold.signal.aborted) return;
        failures++;
        await this.handleFailure(classifyPollFailure(error), failures, hold);
        continue;
      }
      if (updates.length === 0) {
        failures = 0;
        this.enter('polling');
        continue;
      }
      let next: number;
      try {
        // Not abortable: a stop finishes the batch it is in.
        next = await this.enqueueBatch(updates, texts);
      } catch (error) {
        failures++;
        const delay = backoffDelay(failures, options.networkBackoffMs, options.networkBackoffMaxMs);
        this.enter('backoff', `cannot store updates: ${message(error)}; retrying in ${delay} ms`);
        this.deps.logger.warn({ bot: this.botId, err: message(error) }, 'polled batch not stored');
        await abortableDelay(delay, hold.signal);
        continue;
      }
      // Every update up to `next - 1` is durably enqueued, so the next getUpdates may
      // confirm them whether or not the save below succeeds: the saved offset only
      // spares the next holder a re-read of duplicates.
      offset = next;
      failures = 0;
      this.enter('polling');
      try {
        if (!(await lease.saveOffset(next))) {
          this.loseLease(hold, 'the offset save found the lease taken');
          return;
        }
      } catch (error) {
        this.deps.logger.warn({ bot: this.botId, err: message(error) }, 'offset not saved');
      }
    }
  }

  /**
   * Enqueues a batch in order; returns the offset that confirms it. Each update goes
   * with its bytes as Telegram sent them (`texts`), as webhook updates do.
   */
  private async enqueueBatch(updates: unknown[], texts: string[] | undefined): Promise<number> {
    const bot = this.deps.bots.get(this.botId);
    if (!bot) throw new Error('the bot was removed from the config');
    const ids: number[] = [];
    let next: number | undefined;
    for (const [index, raw] of updates.entries()) {
      const id = (raw as { update_id?: unknown } | null)?.update_id;
      if (typeof raw !== 'object' || raw === null || !isUpdateId(id)) {
        this.deps.logger.error(
          { bot: this.botId },
          'getUpdates returned an update without a valid update_id; skipped',
        );
        continue;
      }
      await this.deps.intake.accept(
        bot,
        raw as Update,
        Buffer.from(texts?.[index] ?? JSON.stringify(raw)),
        UpdateSource.Polling,
      );
      ids.push(id);
      next = id + 1;
    }
    await this.deps.options.afterBatchEnqueued?.(this.botId, ids);
    if (next === undefined) throw new Error('getUpdates returned no update with a valid update_id');
    return next;
  }

  private async handleFailure(
    failure: PollFailure,
    failures: number,
    hold: AbortController,
  ): Promise<void> {
    const { options, logger, lease, clients } = this.deps;
    const bot = this.botId;
    switch (failure.kind) {
      case 'webhook-active': {
        const since = Date.now() - this.lastDeleteWebhookAt;
        if (since < options.deleteWebhookEveryMs) {
          const wait = options.deleteWebhookEveryMs - since;
          this.enter(
            'conflict',
            `${failure.problem}; it was deleted less than ${Math.round(options.deleteWebhookEveryMs / 1000)} s ago, polling again in ${Math.ceil(wait / 1000)} s`,
          );
          await abortableDelay(wait, hold.signal);
          return;
        }
        this.lastDeleteWebhookAt = Date.now();
        logger.warn(
          { bot },
          'getUpdates: a webhook is set for this polling bot; deleting it (pending updates are kept)',
        );
        try {
          await clients
            .get(bot)
            ?.call('deleteWebhook', { drop_pending_updates: false }, { signal: hold.signal });
        } catch (error) {
          if (hold.signal.aborted) return;
          this.enter('backoff', `deleteWebhook failed: ${message(error)}`);
          await abortableDelay(
            backoffDelay(failures, options.networkBackoffMs, options.networkBackoffMaxMs),
            hold.signal,
          );
        }
        return;
      }
      case 'terminated': {
        let ours = false;
        try {
          ours = await lease.renew();
        } catch {
          // Unknown: treated as lost, the standby loop finds out.
        }
        if (!ours) {
          this.loseLease(hold, 'another replica polls');
          return;
        }
        this.enter('conflict', failure.problem);
        logger.warn({ bot }, `getUpdates: ${failure.problem}`);
        await abortableDelay(options.conflictBackoffMs, hold.signal);
        return;
      }
      case 'unauthorized':
        this.enter('unauthorized', failure.problem);
        logger.error({ bot }, `getUpdates: ${failure.problem}`);
        await abortableDelay(options.unauthorizedBackoffMs, hold.signal);
        return;
      case 'rate-limited':
        this.enter('backoff', failure.problem);
        logger.warn({ bot }, `getUpdates: ${failure.problem}`);
        await abortableDelay(failure.waitMs, hold.signal);
        return;
      case 'network': {
        const delay = backoffDelay(failures, options.networkBackoffMs, options.networkBackoffMaxMs);
        this.enter('backoff', `${failure.problem}; retrying in ${delay} ms`);
        logger.warn({ bot }, `getUpdates: ${failure.problem}`);
        await abortableDelay(delay, hold.signal);
        return;
      }
    }
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
          logger.debug({ bot: this.botId, err: message(error) }, 'poller state not published'),
        );
    }
  }
}
