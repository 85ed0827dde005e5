import type { Redis } from 'ioredis';
import { decodeHandOff, type HandOff } from '../lanes/drain-script-io';
import type { QueueContext } from '../queue-context';

/**
 * Receives the hand-offs published to one dispatcher id, as a dispatcher's inbox does,
 * and keeps them until a test takes them.
 */
export class HandOffListener {
  readonly #received: HandOff[] = [];

  private constructor(private readonly subscriber: Redis) {}

  static async start(ctx: QueueContext, dispatcher: string): Promise<HandOffListener> {
    // Tests run on one Redis server, not a cluster.
    const subscriber = (ctx.redis as Redis).duplicate({ enableOfflineQueue: true });
    const listener = new HandOffListener(subscriber);
    subscriber.on('messageBuffer', (_channel: Buffer, message: Buffer) =>
      listener.#received.push(decodeHandOff(message)),
    );
    await subscriber.subscribe(ctx.keys.inbox(dispatcher));
    return listener;
  }

  /** Waits (up to `ms`) until a hand-off is there and takes the oldest. */
  async take(ms = 1_000): Promise<HandOff | undefined> {
    const deadline = Date.now() + ms;
    while (!this.#received.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return this.#received.shift();
  }

  /** The hand-offs received so far, without waiting; they stay. */
  get pending(): number {
    return this.#received.length;
  }

  /** Round trip on the subscriber: every message published before this call has arrived. */
  async settle(): Promise<void> {
    await this.subscriber.ping();
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
