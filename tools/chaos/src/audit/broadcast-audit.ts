/** What a broadcast did with its recipients, against docs/guarantees.md "Broadcasts". */
export interface BroadcastAudit {
  recipients: number;
  /** Recipients that got the message at least once. */
  reached: number;
  /** Copies beyond the first, over every recipient. */
  duplicates: number;
  /** Recipients that got it more than once. */
  duplicated: number;
  /** Recipients that never got it. */
  lost: number[];
  /** Chats that got it though they were no recipient. */
  stray: number[];
  /** The copies the guarantee allows: one per recipient in flight at each kill. */
  allowed: number;
}

/**
 * Audits a broadcast: `recipients` as posted, `made` the chat of every send of its
 * message Telegram answered 200. Each recipient must be reached; beyond the first, a
 * copy is allowed only for recipients in flight when a dispatcher died, so at most
 * `inFlight` per kill.
 */
export function auditBroadcast(
  recipients: readonly number[],
  made: readonly number[],
  kills: number,
  inFlight: number,
): BroadcastAudit {
  const wanted = new Set(recipients);
  const copies = new Map<number, number>();
  const stray = new Set<number>();
  for (const chat of made) {
    if (!wanted.has(chat)) stray.add(chat);
    else copies.set(chat, (copies.get(chat) ?? 0) + 1);
  }
  let duplicates = 0;
  let duplicated = 0;
  for (const n of copies.values()) {
    if (n > 1) {
      duplicates += n - 1;
      duplicated++;
    }
  }
  return {
    recipients: wanted.size,
    reached: copies.size,
    duplicates,
    duplicated,
    lost: recipients.filter((chat) => !copies.has(chat)),
    stray: [...stray].sort((a, b) => a - b),
    allowed: kills * inFlight,
  };
}
