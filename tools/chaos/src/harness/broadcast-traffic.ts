import { randomBytes } from 'node:crypto';
import { errorMessage } from '@relaygram/contracts';
import { request } from 'undici';
import { sleep } from './app-process';
import { POLL_BOT, type ChaosCluster } from './chaos-cluster';

/** First recipient: far from the chats of the update load, the services and the outbox. */
const FIRST_CHAT = 9_000_000;

/** A broadcast's view as `GET .../broadcasts/:id` answers it (the fields the scenario reads). */
export interface BroadcastSeen {
  status: string;
  total: number;
  sent: number;
  blocked: number;
  failed: number;
  pending: number;
}

/**
 * One broadcast (`POST /api/v1/:botId/broadcasts`, `sendMessage` of a text of its own)
 * to `recipients` chats while processes die. The POST is made again with the same
 * Idempotency-Key until it gets its 202, as a client following Retry-After would.
 */
export class BroadcastTraffic {
  readonly recipients: readonly number[];
  readonly text = `bc-${randomBytes(6).toString('hex')}`;
  readonly key = `chaos-${randomBytes(6).toString('hex')}`;
  id: string | undefined;
  acceptedAt: number | undefined;
  /** POSTs made until the 202, and the answers that were not one. */
  posts = 0;
  readonly refusals: string[] = [];

  constructor(
    private readonly cluster: ChaosCluster,
    readonly bot: string,
    count: number,
  ) {
    this.recipients = Array.from({ length: count }, (_, i) => FIRST_CHAT + i);
  }

  /** POSTs until a 202 (true), or until `giveUpAt` or an answer no retry can change (false). */
  async post(giveUpAt: number): Promise<boolean> {
    const body = JSON.stringify({
      chat_ids: this.recipients,
      method: 'sendMessage',
      params: { text: this.text },
    });
    for (;;) {
      this.posts++;
      let status = 0;
      let text: string;
      try {
        const res = await request(`${this.#base()}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-token': this.cluster.clientToken,
            'idempotency-key': this.key,
          },
          body,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (error) {
        text = errorMessage(error);
      }
      this.cluster.record(`broadcast POST (try ${this.posts}) -> ${status} ${text}`);
      if (status === 202) {
        this.id = (JSON.parse(text) as { id: string }).id;
        this.acceptedAt = Date.now();
        return true;
      }
      this.refusals.push(status === 0 ? text : `${status} ${text}`);
      if (status !== 0 && status !== 409 && status !== 429 && status < 500) return false;
      if (Date.now() > giveUpAt) return false;
      await sleep(status === 0 ? 200 : 1_000);
    }
  }

  async status(): Promise<BroadcastSeen> {
    return (await this.cluster.getJson(`${this.#base()}/${this.id}`, {
      'x-service-token': this.cluster.clientToken,
    })) as BroadcastSeen;
  }

  /** Until the broadcast reads `done` (its last view), or `deadline` passes (undefined). */
  async waitDone(deadline: number): Promise<BroadcastSeen | undefined> {
    for (;;) {
      try {
        const seen = await this.status();
        if (seen.status === 'done') return seen;
      } catch {
        // the gateway restarting: asked again
      }
      if (Date.now() > deadline) return undefined;
      await sleep(1_000);
    }
  }

  /** The chats Telegram (the emulator) answered 200 for this broadcast's message, in arrival order. */
  made(): number[] {
    const { hookBot, pollBot } = this.cluster;
    const botId = (this.bot === POLL_BOT ? pollBot : hookBot).id;
    return this.cluster.emulator
      .calls(botId, { method: 'sendMessage' })
      .filter((call) => call.status === 200 && call.params.text === this.text)
      .sort((a, b) => a.time - b.time)
      .map((call) => Number(call.params.chat_id));
  }

  #base(): string {
    return `${this.cluster.gateway.url}/api/v1/${this.bot}/broadcasts`;
  }
}
