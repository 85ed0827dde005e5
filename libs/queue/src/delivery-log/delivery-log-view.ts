import type { DeliveryState, LoggedAttempt, UpdateTrace } from '@relaygram/contracts';

/** A logged attempt as the admin API and the CLI's `--json` show it: snake_case, ISO times. */
export interface AttemptView {
  id: string;
  at: string;
  delivery_id: string;
  update_id: number;
  bot: string;
  route: string;
  attempt: number;
  outcome: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
  /** The answer's first 512 bytes, as text. */
  body: string;
  next_attempt_at: string | null;
}

export interface TracedDeliveryView {
  route: string;
  delivery_id: string;
  state: DeliveryState;
  next_attempt_at: string | null;
  /** Oldest first. */
  attempts: AttemptView[];
}

export interface UpdateTraceView {
  bot: string;
  update_id: number;
  status: string;
  received_at: string;
  duplicates_at: string[];
  deliveries: TracedDeliveryView[];
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export function attemptView(a: LoggedAttempt): AttemptView {
  return {
    id: a.id,
    at: iso(a.at),
    delivery_id: a.deliveryId,
    update_id: a.updateId,
    bot: a.bot,
    route: a.route,
    attempt: a.attempt,
    outcome: a.outcome,
    status: a.status,
    error: a.error,
    duration_ms: a.durationMs,
    body: a.body,
    next_attempt_at: isoOrNull(a.nextAttemptAt),
  };
}

export function updateTraceView(t: UpdateTrace): UpdateTraceView {
  return {
    bot: t.bot,
    update_id: t.updateId,
    status: t.status,
    received_at: iso(t.receivedAt),
    duplicates_at: t.duplicatesAt.map(iso),
    deliveries: t.deliveries.map((d) => ({
      route: d.route,
      delivery_id: d.deliveryId,
      state: d.state,
      next_attempt_at: isoOrNull(d.nextAttemptAt),
      attempts: d.attempts.map(attemptView),
    })),
  };
}
