import type { RedisKeys } from './redis-keys';

/**
 * The Redis keys of outbound pacing and idempotency keys, under the install's prefix.
 * Every key of one bot starts with `<prefix>:outbound:<bot>:`; on Redis Cluster the
 * prefix is a hash tag, so a pacing script may touch all of a bot's keys at once.
 */
export class OutboundKeys {
  readonly prefix: string;

  constructor(prefixOrKeys: string | Pick<RedisKeys, 'prefix'>) {
    const prefix = typeof prefixOrKeys === 'string' ? prefixOrKeys : prefixOrKeys.prefix;
    if (!prefix || /[\s:]/.test(prefix.replace(/^\{[^}]*\}$/, 'x'))) {
      throw new Error('redis.prefix: must be a non-empty name without spaces or colons');
    }
    this.prefix = prefix;
  }

  /**
   * Hash: the bot's send calendar, a ring of time bins (`<slot>` → `<bin>:<count>`), so
   * a call may reserve a later bin without holding back calls that can go sooner.
   */
  bins(bot: string): string {
    return `${this.prefix}:outbound:${bot}:bins`;
  }

  /** String of one chat's budget: `<tat>:<last>`, its theoretical arrival time and last slot (ms). */
  chat(bot: string, chat: string): string {
    return `${this.prefix}:outbound:${bot}:chat:${chat}`;
  }

  /** List of a group's or channel's latest slots (ms), newest first, for the per-minute budget. */
  group(bot: string, chat: string): string {
    return `${this.prefix}:outbound:${bot}:group:${chat}`;
  }

  /** Sorted set of pauses Telegram imposed: member `*` (the whole bot) or a chat, score = end (ms). */
  pauses(bot: string): string {
    return `${this.prefix}:outbound:${bot}:pauses`;
  }

  /** Sorted set of chats that got a Telegram 429 lately, by time (ms): the bot-wide decision. */
  recent429(bot: string): string {
    return `${this.prefix}:outbound:${bot}:recent-429`;
  }

  /** One idempotency key of the REST API: `digest` hashes client, bot and key together. */
  idempotency(digest: string): string {
    return `${this.prefix}:idempotency:${digest}`;
  }

  /** Pub/sub channel on which a finished idempotent request announces its digest. */
  get idempotencyDone(): string {
    return `${this.prefix}:idempotency-done`;
  }
}
