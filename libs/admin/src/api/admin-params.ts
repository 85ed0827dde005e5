import { BadRequestException, NotFoundException } from '@nestjs/common';
import { DEAD_REASONS, type DeadReason } from '@relaygram/contracts';
import type { DeadLetterFilter } from '@relaygram/queue';

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
  const route = name(params, 'route');
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
