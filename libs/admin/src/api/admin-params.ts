import { BadRequestException, NotFoundException } from '@nestjs/common';
import {
  ATTEMPT_STATUS_FILTERS,
  DEAD_REASONS,
  OUTBOX_ROUTE,
  type AttemptQuery,
  type AttemptStatusFilter,
  type DeadReason,
} from '@relaygram/contracts';
import { ATTEMPT_PAGE_DEFAULT, ATTEMPT_PAGE_MAX, type DeadLetterFilter } from '@relaygram/queue';

/** Bot ids and route names (SPEC section 2). */
const NAME = /^[a-z0-9-]{1,64}$/;
/** Delivery ids are UUIDs; anything printable and short is looked up, the rest is unknown. */
const DELIVERY_ID = /^[A-Za-z0-9_-]{1,128}$/;
const CURSOR = /^-?\d+(\.\d+)?:\d+$/;

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export type QueryParams = Record<string, string | string[] | undefined>;

/** 400 with the parameter named, e.g. `{"error":"limit: must be an integer from 1 to 500","parameter":"limit"}`. */
export function badParameter(parameter: string, problem: string): BadRequestException {
  return new BadRequestException({ error: `${parameter}: ${problem}`, parameter });
}

function single(params: QueryParams, name: string): string | undefined {
  const value = params[name];
  if (Array.isArray(value)) throw badParameter(name, 'give it once');
  return value === '' ? undefined : value;
}

function name(params: QueryParams, param: string): string | undefined {
  const value = single(params, param);
  if (value !== undefined && !NAME.test(value))
    throw badParameter(param, 'must be a name of lower-case letters, digits and dashes');
  return value;
}

export function deadLetterFilter(params: QueryParams): DeadLetterFilter {
  const filter: DeadLetterFilter = {};
  // Outbox sends that failed are the dead letters of the outbox's internal route.
  const route = single(params, 'route') === OUTBOX_ROUTE ? OUTBOX_ROUTE : name(params, 'route');
  const bot = name(params, 'bot');
  const reason = single(params, 'reason');
  if (route) filter.route = route;
  if (bot) filter.bot = bot;
  if (reason !== undefined) {
    if (!(DEAD_REASONS as readonly string[]).includes(reason))
      throw badParameter('reason', `must be one of ${DEAD_REASONS.join(', ')}`);
    filter.reason = reason as DeadReason;
  }
  return filter;
}

export function pageSize(params: QueryParams): number {
  const raw = single(params, 'limit');
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > MAX_PAGE_SIZE)
    throw badParameter('limit', `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  return value;
}

export function cursor(params: QueryParams): string | undefined {
  const raw = single(params, 'cursor');
  if (raw !== undefined && !CURSOR.test(raw))
    throw badParameter('cursor', 'not a cursor of this list (pass back next_cursor)');
  return raw;
}

/** A path's delivery id; one that cannot exist is simply not found. */
export function deliveryId(raw: string): string {
  if (!DELIVERY_ID.test(raw)) throw notFound('dead letter', raw);
  return raw;
}

export function notFound(what: string, id: string): NotFoundException {
  const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
  return new NotFoundException({ error: `unknown ${what}: ${shown}` });
}

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;
const UPDATE_ID = /^\d{1,16}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?$/;

/** A path's update_id: a non-negative integer, else 400. */
export function updateIdParam(raw: string): number {
  const value = Number(raw);
  if (!UPDATE_ID.test(raw) || !Number.isSafeInteger(value))
    throw badParameter('updateId', 'must be a non-negative integer (an update_id)');
  return value;
}

/** A time filter: an ISO 8601 time or milliseconds since the epoch. */
function time(params: QueryParams, param: string): number | undefined {
  const raw = single(params, param);
  if (raw === undefined) return undefined;
  // Date.parse takes much besides ISO 8601 ('-5' is a year), so anything else is refused.
  const value = /^\d+$/.test(raw) ? Number(raw) : ISO_TIME.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 0)
    throw badParameter(param, 'must be an ISO 8601 time or milliseconds since the epoch');
  return value;
}

export function attemptQuery(params: QueryParams): AttemptQuery {
  const status = single(params, 'status');
  if (status !== undefined && !(ATTEMPT_STATUS_FILTERS as readonly string[]).includes(status))
    throw badParameter('status', `must be one of ${ATTEMPT_STATUS_FILTERS.join(', ')}`);
  const limit = single(params, 'limit');
  if (limit !== undefined && (!/^\d+$/.test(limit) || +limit < 1 || +limit > ATTEMPT_PAGE_MAX))
    throw badParameter('limit', `must be an integer from 1 to ${ATTEMPT_PAGE_MAX}`);
  const after = single(params, 'cursor');
  if (after !== undefined && !STREAM_ID.test(after))
    throw badParameter('cursor', 'not a cursor of this list (pass back next_cursor)');
  const since = time(params, 'since');
  const until = time(params, 'until');
  return {
    ...(status !== undefined ? { status: status as AttemptStatusFilter } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(after !== undefined ? { cursor: after } : {}),
    limit: limit === undefined ? ATTEMPT_PAGE_DEFAULT : Number(limit),
  };
}
