import type { BroadcastRecord, BroadcastStore } from '@relaygram/queue';
import type { GatewayAccess } from '../access/request-access';

/** Records read per look at the bot's index. */
const SCAN_PAGE = 200;
/** A listing looks at the bot's newest broadcasts this far back (they are kept 7 days). */
export const LIST_SCAN_LIMIT = 10_000;

/**
 * The client's broadcasts of the request's bot, newest first, `limit` of them after
 * skipping `offset`. The bot's index holds every client's, so it is read in pages and
 * filtered. `list` prunes ids whose broadcast is gone from the index, so the next page
 * starts as many places on as records came back; an empty page may be one of pruned
 * ids only, so the index ends at the second empty page in a row.
 */
export async function ownBroadcasts(
  store: BroadcastStore,
  access: GatewayAccess,
  offset: number,
  limit: number,
): Promise<BroadcastRecord[]> {
  const own: BroadcastRecord[] = [];
  let skipped = 0;
  let at = 0;
  let emptyPages = 0;
  while (own.length < limit && at < LIST_SCAN_LIMIT && emptyPages < 2) {
    const page = await store.list(access.bot.id, at, SCAN_PAGE);
    emptyPages = page.length === 0 ? emptyPages + 1 : 0;
    at += page.length;
    for (const record of page) {
      if (record.client !== access.client.name) continue;
      if (skipped < offset) {
        skipped++;
      } else if (own.length < limit) {
        own.push(record);
      }
    }
  }
  return own;
}
