import { STATUS_CODES } from 'node:http';
import type { FailSpec, FailureTimes } from './emulator.types';
import { TelegramError } from './telegram-error';

export type FailureAction =
  { kind: 'error'; error: TelegramError } | { kind: 'delay'; delayMs: number } | { kind: 'drop' };

interface FailureRule {
  /** Lower-cased method name; every method when undefined. */
  method: string | undefined;
  remaining: number;
  action: FailureAction;
}

/**
 * Failures a test forces on a bot, consumed in the order they were added: each call takes
 * the first rule that matches its method.
 */
export class ForcedFailures {
  private rules: FailureRule[] = [];

  get size(): number {
    return this.rules.length;
  }

  add(spec: FailSpec): void {
    const checked = validateFailSpec(spec);
    this.rules.push({
      method: checked.method?.toLowerCase(),
      remaining: timesToCount(checked.times),
      action: toAction(checked),
    });
  }

  take(method: string): FailureAction | undefined {
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i] as FailureRule;
      if (rule.method !== undefined && rule.method !== method) continue;
      if (--rule.remaining <= 0) this.rules.splice(i, 1);
      return rule.action;
    }
    return undefined;
  }

  clear(): void {
    this.rules = [];
  }
}

function timesToCount(times: FailureTimes | undefined): number {
  if (times === 'always') return Number.POSITIVE_INFINITY;
  return times ?? 1;
}

function toAction(spec: FailSpec): FailureAction {
  if ('error' in spec) {
    const { code, description, retryAfter, migrateToChatId } = spec.error;
    const parameters: { retry_after?: number; migrate_to_chat_id?: number } = {};
    if (retryAfter !== undefined) parameters.retry_after = retryAfter;
    if (migrateToChatId !== undefined) parameters.migrate_to_chat_id = migrateToChatId;
    const hasParameters = retryAfter !== undefined || migrateToChatId !== undefined;
    return {
      kind: 'error',
      error: new TelegramError(code, description, hasParameters ? parameters : undefined),
    };
  }
  if ('delayMs' in spec) return { kind: 'delay', delayMs: spec.delayMs };
  return { kind: 'drop' };
}

/** Checks a spec that may come from JSON; throws a TypeError naming the bad field. */
export function validateFailSpec(value: unknown): FailSpec {
  if (typeof value !== 'object' || value === null) throw new TypeError('fail spec: not an object');
  const spec = value as Record<string, unknown>;
  if (spec['method'] !== undefined && typeof spec['method'] !== 'string') {
    throw new TypeError('fail spec: method must be a string');
  }
  const times = spec['times'];
  if (
    times !== undefined &&
    times !== 'always' &&
    !(typeof times === 'number' && Number.isInteger(times) && times > 0)
  ) {
    throw new TypeError('fail spec: times must be a positive integer or "always"');
  }
  const kinds = ['error', 'delayMs', 'drop'].filter((k) => spec[k] !== undefined);
  if (kinds.length !== 1) {
    throw new TypeError('fail spec: give exactly one of error, delayMs or drop');
  }
  if (spec['error'] !== undefined) {
    const error = spec['error'] as Record<string, unknown>;
    if (typeof error !== 'object' || error === null) {
      throw new TypeError('fail spec: error must be an object');
    }
    const code = error['code'];
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 400 || code > 599) {
      throw new TypeError('fail spec: error.code must be an HTTP error status (400-599)');
    }
    if (typeof error['description'] !== 'string') {
      throw new TypeError('fail spec: error.description must be a string');
    }
    for (const key of ['retryAfter', 'migrateToChatId']) {
      if (error[key] !== undefined && typeof error[key] !== 'number') {
        throw new TypeError(`fail spec: error.${key} must be a number`);
      }
    }
  }
  if (spec['delayMs'] !== undefined) {
    const delay = spec['delayMs'];
    if (typeof delay !== 'number' || !(delay >= 0)) {
      throw new TypeError('fail spec: delayMs must be a non-negative number');
    }
  }
  if (spec['drop'] !== undefined && spec['drop'] !== true) {
    throw new TypeError('fail spec: drop must be true');
  }
  return spec as unknown as FailSpec;
}

export function blockedByUserFailure(method?: string, times?: FailureTimes): FailSpec {
  return {
    method,
    times,
    error: { code: 403, description: 'Forbidden: bot was blocked by the user' },
  };
}

export function tooManyRequestsFailure(
  retryAfter: number,
  method?: string,
  times?: FailureTimes,
): FailSpec {
  return {
    method,
    times,
    error: { code: 429, description: `Too Many Requests: retry after ${retryAfter}`, retryAfter },
  };
}

export function serverErrorFailure(code: number, method?: string, times?: FailureTimes): FailSpec {
  return { method, times, error: { code, description: STATUS_CODES[code] ?? 'Server Error' } };
}

export function unauthorizedFailure(times?: FailureTimes): FailSpec {
  return { times, error: { code: 401, description: 'Unauthorized' } };
}
