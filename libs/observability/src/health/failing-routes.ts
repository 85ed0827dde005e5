import type { QueueContext } from '@relaygram/queue';

/**
 * Why a route fails: its last attempts all failed, at least FAILING_AFTER_ATTEMPTS of
 * them in a row on one dispatcher. Written by that dispatcher, cleared by the next
 * delivered attempt of any; shown by /healthz and the admin API of every process.
 */
export interface RouteFailing {
  /** The target's HTTP status; null for a timeout or network error (see `error`). */
  status: number | null;
  /** `HTTP 401`, `timeout`, `network error ECONNREFUSED`. */
  error: string;
  /** The first bytes of the target's last answer (FAILING_BODY_BYTES at most). */
  body: string;
  /** When the first failed attempt of the streak ended (ISO 8601). */
  since: string;
  /** When the last one ended (ISO 8601). */
  last_at: string;
  /** Failed attempts in a row. */
  attempts: number;
}

/** At most this many bytes of a failing target's answer are kept and shown. */
export const FAILING_BODY_BYTES = 200;

/** A route is shown failing once this many attempts in a row failed. */
export const FAILING_AFTER_ATTEMPTS = 5;

/** A stored entry, or undefined when it is not one (an older or foreign value). */
export function parseRouteFailing(text: string | undefined): RouteFailing | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<RouteFailing>;
    if (
      typeof value.error !== 'string' ||
      typeof value.since !== 'string' ||
      typeof value.attempts !== 'number'
    )
      return undefined;
    return {
      status: typeof value.status === 'number' ? value.status : null,
      error: value.error,
      body: typeof value.body === 'string' ? value.body.slice(0, FAILING_BODY_BYTES) : '',
      since: value.since,
      last_at: typeof value.last_at === 'string' ? value.last_at : value.since,
      attempts: value.attempts,
    };
  } catch {
    return undefined;
  }
}

/** The failing routes among `routes`, by name. */
export async function readFailingRoutes(
  ctx: QueueContext,
  routes: readonly string[],
): Promise<Map<string, RouteFailing>> {
  const failing = new Map<string, RouteFailing>();
  if (!routes.length) return failing;
  const values = await ctx.redis.hmget(ctx.keys.failingRoutes, ...routes);
  routes.forEach((route, i) => {
    const entry = parseRouteFailing(values[i] ?? undefined);
    if (entry) failing.set(route, entry);
  });
  return failing;
}
