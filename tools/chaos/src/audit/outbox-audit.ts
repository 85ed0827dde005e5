/** A send Telegram answered 200: its number (`o<n>`) and the chat it went to. */
export interface MadeSend {
  n: number;
  chat: number;
}

/** What the outbox did with the sends it accepted, against docs/guarantees.md "Outbox sends". */
export interface OutboxAudit {
  accepted: number;
  /** Distinct sends made (a send made twice counts once). */
  made: number;
  /** Copies beyond the first of each send. */
  duplicates: number;
  /** Accepted, never made. */
  lost: number[];
  /** A chat's first arrivals out of acceptance order: one line each. */
  orderViolations: string[];
  /** A send made again after another send of its chat: beyond the duplicate window. */
  splitDuplicates: string[];
  /** Made, though never accepted (or to another chat than the one it was accepted for). */
  stray: string[];
}

/**
 * Audits outbox sends: `acceptedByChat` holds each chat's accepted sends in the order
 * their 202s came, `made` every send Telegram answered 200, in arrival order. Sends go
 * one at a time per chat, so the only duplicate is the head sent again after its
 * dispatcher died: its copies follow each other in its chat, with nothing between.
 */
export function auditOutbox(
  acceptedByChat: ReadonlyMap<number, readonly number[]>,
  made: readonly MadeSend[],
): OutboxAudit {
  const chatOf = new Map<number, number>();
  const rank = new Map<number, number>();
  for (const [chat, sends] of acceptedByChat) {
    sends.forEach((n, i) => {
      chatOf.set(n, chat);
      rank.set(n, i);
    });
  }
  const arrivals = new Map<number, number[]>();
  const stray: string[] = [];
  for (const send of made) {
    const accepted = chatOf.get(send.n);
    if (accepted === undefined) stray.push(`o${send.n} made in chat ${send.chat}, never accepted`);
    else if (accepted !== send.chat) {
      stray.push(`o${send.n} made in chat ${send.chat}, accepted for chat ${accepted}`);
    }
    const list = arrivals.get(send.chat) ?? [];
    list.push(send.n);
    arrivals.set(send.chat, list);
  }

  const seen = new Set<number>();
  const orderViolations: string[] = [];
  const splitDuplicates: string[] = [];
  let duplicates = 0;
  for (const [chat, list] of arrivals) {
    let highest: number | undefined;
    list.forEach((n, i) => {
      // A copy in another chat than its own is stray (above), not a send of this chat.
      const own = chatOf.get(n);
      if (own !== undefined && own !== chat) return;
      if (seen.has(n)) {
        duplicates++;
        const before = list[i - 1];
        if (before !== n) {
          splitDuplicates.push(`chat ${chat}: o${n} made again after o${before ?? '?'}`);
        }
        return;
      }
      seen.add(n);
      const r = rank.get(n);
      if (r === undefined) return;
      if (highest !== undefined && r < (rank.get(highest) as number)) {
        orderViolations.push(
          `chat ${chat}: o${n} (accepted #${r + 1}) first made after o${highest} ` +
            `(accepted #${(rank.get(highest) as number) + 1})`,
        );
      } else {
        highest = n;
      }
    });
  }
  const lost = [...chatOf.keys()].filter((n) => !seen.has(n)).sort((a, b) => a - b);
  return {
    accepted: chatOf.size,
    made: seen.size,
    duplicates,
    lost,
    orderViolations,
    splitDuplicates,
    stray,
  };
}
