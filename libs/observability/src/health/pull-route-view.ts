import type { PullRouteConfig } from '@relaygram/config';
import type { PullLaneStatus } from '@relaygram/queue';

/** A pull route whose updates wait this long without its client polling is stale. */
export const PULL_STALE_AFTER_MS = 5 * 60_000;

/** One pull route of one bot, as /healthz, the admin page and `relaygram status` show it. */
export interface PullRouteView {
  route: string;
  client: string;
  /** Updates waiting for the client (served or not, unconfirmed); null when Redis does not answer. */
  pending: number | null;
  /** When its client last called getUpdates; null if never (or unknown). */
  last_polled_at: string | null;
  /** Updates wait and the client has not polled for PULL_STALE_AFTER_MS (or ever). */
  stale: boolean;
}

/**
 * A route whose client has never polled counts as stale as soon as updates wait: the
 * bot behind it is not running, and nothing would tell the operator otherwise.
 */
export function pullRouteView(
  route: PullRouteConfig,
  lane: PullLaneStatus | undefined,
  now: number,
): PullRouteView {
  const pending = lane ? lane.pending : null;
  const polledAt = lane?.polledAt;
  return {
    route: route.name,
    client: route.pull.client,
    pending,
    last_polled_at: polledAt === undefined ? null : new Date(polledAt).toISOString(),
    stale:
      pending !== null &&
      pending > 0 &&
      (polledAt === undefined || now - polledAt >= PULL_STALE_AFTER_MS),
  };
}

/** The bot's problem line for a stale pull route (names only, never a token). */
export function stalePullProblem(view: PullRouteView): string {
  const since = view.last_polled_at === null ? 'has never polled' : 'has not polled for 5 minutes';
  return `pull route ${view.route}: client ${view.client} ${since} while ${view.pending} updates wait`;
}
