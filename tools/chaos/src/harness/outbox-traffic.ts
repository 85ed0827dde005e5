import { randomBytes } from 'node:crypto';
import { errorMessage } from '@relaygram/contracts';
import type { RecordedCall } from '@relaygram/testing';
import { request } from 'undici';
import { sleep } from './app-process';
import { POLL_BOT, type ChaosCluster } from './chaos-cluster';

export interface OutboxTrafficOptions {
  /** The bot of the chaos config the sends go through (its id in the config). */
  bot: string;
  sends: number;
  chats: number;
  /** POSTs started per second, all chats together. */
  perSecond: number;
  /** A POST still without its 202 this long after the plan's end is given up. */
  giveUpAfterMs: number;
}

/** One outbox send: `o<n>` to its chat, posted until it got its 202. */
export interface OutboxPost {
  n: number;
  chat: number;
  text: string;
  key: string;
  /** The id of the 202; undefined while (or if never) accepted. */
  id?: string;
  acceptedAt?: number;
  /** POSTs made for it (1 when the first got its 202). */
  tries: number;
  /** When its first POST was made. */
  postedAt?: number;
  /** The last answer that was not a 202: a status, or the connection error. */
  lastRefusal?: string;
}

/** First chat id of the sends: far from the chats of the update load and the service traffic. */
const FIRST_CHAT = 7_000_000;

/**
 * A service handing sends to the outbox (`POST /api/v1/:botId/outbox`) while processes
 * die: send n is `sendMessage` of `o<n>` to chat n mod chats, each POST with its own
 * Idempotency-Key. A chat posts its next send only once its previous one got its 202,
 * so the acceptance order per chat is the order of the sends. A POST that gets no 202
 * (connection refused or reset while the gateway is down, a 5xx or 429, a 409 while a
 * killed gateway's request still holds the key) is made again with the same key and body, as
 * a client following Retry-After would, until it gets one or the plan is long over.
 */
export class OutboxTraffic {
  readonly posts: OutboxPost[] = [];
  /** Answers that were not a 202, by status (0: no answer). */
  readonly refusals = new Map<number, number>();
  /** When the last chat finished posting. */
  postingEndedAt: number | undefined;
  readonly chatIds: readonly number[];
  private readonly tag = randomBytes(6).toString('hex');

  constructor(
    readonly cluster: ChaosCluster,
    readonly options: OutboxTrafficOptions,
  ) {
    this.chatIds = Array.from({ length: options.chats }, (_, i) => FIRST_CHAT + i);
    for (let n = 1; n <= options.sends; n++) {
      this.posts.push({
        n,
        chat: this.chatIds[(n - 1) % options.chats] as number,
        // The run's tag keeps apart the sends of an earlier scenario on the same emulator.
        text: `o${n} ${this.tag}`,
        key: `chaos-${this.tag}-o${n}`,
        tries: 0,
      });
    }
  }

  /** How long the plan's POSTs take at `perSecond`, retries aside. */
  get planMs(): number {
    return (this.options.sends / this.options.perSecond) * 1000;
  }

  /** Every chat posting its sends in turn; resolves once each got its 202 or was given up. */
  async run(): Promise<void> {
    const started = Date.now();
    const giveUpAt = started + this.planMs + this.options.giveUpAfterMs;
    await Promise.all(
      this.chatIds.map(async (chat) => {
        for (const post of this.posts.filter((p) => p.chat === chat)) {
          const due = started + ((post.n - 1) / this.options.perSecond) * 1000;
          if (due > Date.now()) await sleep(due - Date.now());
          if (!(await this.postUntilAccepted(post, giveUpAt))) return;
        }
      }),
    );
    this.postingEndedAt = Date.now();
  }

  /** The send that waited longest from its first POST to its 202. */
  slowest(): { post: OutboxPost; ms: number } | undefined {
    let slowest: { post: OutboxPost; ms: number } | undefined;
    for (const post of this.accepted) {
      const ms = (post.acceptedAt as number) - (post.postedAt as number);
      if (!slowest || ms > slowest.ms) slowest = { post, ms };
    }
    return slowest;
  }

  get accepted(): OutboxPost[] {
    return this.posts.filter((p) => p.id !== undefined);
  }

  /** Accepted sends of each chat, in the order they got their 202. */
  acceptedByChat(): Map<number, OutboxPost[]> {
    const byChat = new Map<number, OutboxPost[]>();
    for (const post of this.accepted) {
      const list = byChat.get(post.chat) ?? [];
      list.push(post);
      byChat.set(post.chat, list);
    }
    for (const list of byChat.values()) {
      list.sort((a, b) => (a.acceptedAt as number) - (b.acceptedAt as number) || a.n - b.n);
    }
    return byChat;
  }

  /**
   * The sends Telegram (the emulator) answered 200, in arrival order: the `sendMessage`
   * calls of the bot to the chats of this traffic whose text is one of its sends.
   */
  made(): { n: number; chat: number; time: number }[] {
    const botId = this.botIdentity().id;
    const chats = new Set(this.chatIds);
    return this.cluster.emulator
      .calls(botId, { method: 'sendMessage' })
      .filter((call) => call.status === 200)
      .flatMap((call) => {
        const made = this.sendOf(call);
        return made && chats.has(made.chat) ? [{ ...made, time: call.time }] : [];
      })
      .sort((a, b) => a.time - b.time);
  }

  /** Until every accepted send was made, or `deadline` passes; true when all were. */
  async waitAllMade(deadline: number): Promise<boolean> {
    for (;;) {
      const made = new Set(this.made().map((m) => m.n));
      if (this.accepted.every((p) => made.has(p.n))) return true;
      if (Date.now() > deadline) return false;
      await sleep(500);
    }
  }

  /** `GET /api/v1/:botId/outbox/:id` of an accepted send, as its client reads it. */
  async status(post: OutboxPost): Promise<unknown> {
    const url = `${this.cluster.gateway.url}/api/v1/${this.options.bot}/outbox/${post.id}`;
    return this.cluster.getJson(url, { 'x-service-token': this.cluster.clientToken });
  }

  /** The number of this traffic's send a recorded call carries, or undefined for another call. */
  numberOf(call: RecordedCall): number | undefined {
    const text = call.params.text;
    if (typeof text !== 'string' || !text.endsWith(` ${this.tag}`) || !text.startsWith('o')) {
      return undefined;
    }
    const n = Number(text.slice(1, -this.tag.length - 1));
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }

  /** The send a recorded call made: its `o<n>` and its chat, or undefined for another call. */
  private sendOf(call: RecordedCall): { n: number; chat: number } | undefined {
    const n = this.numberOf(call);
    return n === undefined ? undefined : { n, chat: Number(call.params.chat_id) };
  }

  private botIdentity() {
    const { hookBot, pollBot } = this.cluster;
    return this.options.bot === POLL_BOT ? pollBot : hookBot;
  }

  private async postUntilAccepted(post: OutboxPost, giveUpAt: number): Promise<boolean> {
    const body = JSON.stringify({
      method: 'sendMessage',
      params: { chat_id: post.chat, text: post.text },
    });
    post.postedAt = Date.now();
    for (;;) {
      post.tries++;
      let status = 0;
      let text: string;
      try {
        const res = await request(`${this.cluster.gateway.url}/api/v1/${this.options.bot}/outbox`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-token': this.cluster.clientToken,
            'idempotency-key': post.key,
          },
          body,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (error) {
        // The gateway killed or not back yet: what a service sees is a connection error.
        text = errorMessage(error);
      }
      this.cluster.record(`outbox POST ${post.text} (try ${post.tries}) -> ${status} ${text}`);
      if (status === 202) {
        const answer = JSON.parse(text) as { id?: unknown };
        if (typeof answer.id !== 'string') throw new Error(`202 without an id: ${text}`);
        post.id = answer.id;
        post.acceptedAt = Date.now();
        return true;
      }
      post.lastRefusal = status === 0 ? text : `${status} ${text}`;
      this.refusals.set(status, (this.refusals.get(status) ?? 0) + 1);
      // Anything but a refused connection, a 409 (key still held), a 429 or a 5xx is
      // no transient trouble: retrying the same request cannot change it.
      if (status !== 0 && status !== 409 && status !== 429 && status < 500) return false;
      if (Date.now() > giveUpAt) return false;
      await sleep(status === 0 ? 200 : 1_000);
    }
  }
}
