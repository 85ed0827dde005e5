import type { BroadcastStore } from '@relaygram/queue';
import type { Logger } from 'pino';
import type { BroadcastRef } from './broadcast-outcomes';
import type { ThrottledLog } from './throttled-log';

/**
 * Pauses a broadcast whose bot's token Telegram refused (401): every send would fail,
 * so it stops, for every dispatcher, with the reason in its record, instead of failing
 * each recipient. One pause and one line per broadcast, however many sends were in
 * flight; resumed by hand once the token is fixed, after which a refusal pauses it again.
 */
export class RefusedTokenPause {
  /** Broadcasts (`bot/id`) paused, or being paused, by this process. */
  readonly #pausing = new Set<string>();

  constructor(
    private readonly store: Pick<BroadcastStore, 'control'>,
    private readonly logger: Logger,
    private readonly log: ThrottledLog,
  ) {}

  pause(b: BroadcastRef, reason: string): void {
    const key = `${b.bot}/${b.id}`;
    if (this.#pausing.has(key)) return;
    this.#pausing.add(key);
    this.store
      .control(b.bot, b.id, 'pause', Date.now(), reason)
      .then((result) => {
        // Not running any more (paused already, cancelled, done): nothing to pause.
        if (!result.ok) {
          this.#pausing.delete(key);
          return;
        }
        this.logger.error(
          { bot: b.bot, broadcast_id: b.id, reason },
          "broadcast paused: Telegram refused the bot's token",
        );
      })
      .catch((error: unknown) => {
        // The next refused send asks again.
        this.#pausing.delete(key);
        this.log.warn(
          `${key}/halt`,
          { bot: b.bot, broadcast_id: b.id, err: error },
          'broadcast not paused yet: Redis does not answer',
        );
      });
  }

  /** The broadcast runs again (resumed), or left this process: a refusal pauses it anew. */
  forget(key: string): void {
    this.#pausing.delete(key);
  }
}
