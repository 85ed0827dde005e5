import {
  LOGGED_OUTCOMES,
  parseLaneId,
  type FanOutStatus,
  type LoggedAttempt,
  type LoggedOutcome,
} from '@relaygram/contracts';
import { ATTEMPT_LOG_FIELDS as A, UPDATE_LOG_FIELDS as U } from '../scripts/delivery-log.lua';

/** A stream entry as ioredis returns it: its id and its field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/** The ms part of a stream id: when Redis added the entry. */
export function entryTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

function fieldsOf(fields: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i], fields[i + 1]);
  return map;
}

function numberOrNull(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** An entry of a route's attempt log, or undefined for one it cannot read. */
export function parseAttempt(route: string, [id, raw]: StreamEntry): LoggedAttempt | undefined {
  const f = fieldsOf(raw);
  const outcome = f.get(A.outcome) as LoggedOutcome | undefined;
  const updateId = numberOrNull(f.get(A.updateId));
  const deliveryId = f.get(A.deliveryId);
  if (!outcome || !LOGGED_OUTCOMES.includes(outcome) || updateId === null || !deliveryId) {
    return undefined;
  }
  return {
    id,
    at: entryTime(id),
    deliveryId,
    updateId,
    bot: f.get(A.bot) ?? '',
    route,
    attempt: numberOrNull(f.get(A.attempt)) ?? 0,
    outcome,
    status: numberOrNull(f.get(A.status)),
    error: f.get(A.error) || null,
    durationMs: numberOrNull(f.get(A.durationMs)) ?? 0,
    body: f.get(A.body) ?? '',
    nextAttemptAt: numberOrNull(f.get(A.nextAttemptAt)),
  };
}

/** An entry of a bot's update log. */
export interface LoggedUpdate {
  readonly id: string;
  readonly at: number;
  readonly updateId: number;
  readonly status: FanOutStatus;
  readonly deliveries: readonly { route: string; lane: string; deliveryId: string }[];
}

const FAN_OUT_STATUSES: readonly string[] = ['queued', 'ignored', 'duplicate'];

export function parseUpdate([id, raw]: StreamEntry): LoggedUpdate | undefined {
  const f = fieldsOf(raw);
  const updateId = numberOrNull(f.get(U.updateId));
  const status = f.get(U.status);
  if (updateId === null || !status || !FAN_OUT_STATUSES.includes(status)) return undefined;
  const words = (f.get(U.deliveries) ?? '').split(' ').filter(Boolean);
  const deliveries: { route: string; lane: string; deliveryId: string }[] = [];
  for (let i = 0; i + 1 < words.length; i += 2) {
    const lane = words[i];
    const route = routeOfLane(lane);
    if (route) deliveries.push({ route, lane, deliveryId: words[i + 1] });
  }
  return { id, at: entryTime(id), updateId, status: status as FanOutStatus, deliveries };
}

function routeOfLane(lane: string): string | undefined {
  try {
    return parseLaneId(lane).route;
  } catch {
    return undefined;
  }
}

/** The update_id of an update log entry, without parsing the rest. */
export function loggedUpdateId(fields: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === U.updateId) return fields[i + 1];
  return undefined;
}

/** Whether an attempt's status falls in a filter's class. */
export function matchesStatus(attempt: LoggedAttempt, filter: string | undefined): boolean {
  const { status } = attempt;
  switch (filter) {
    case undefined:
      return true;
    case 'error':
      return status === null;
    case 'failed':
      return status === null || status < 200 || status > 299;
    default: {
      const hundreds = Number(filter.charAt(0));
      return status !== null && Math.floor(status / 100) === hundreds;
    }
  }
}
