import type { Expectation } from './delivery-audit';

/** From the first SIGHUP of a reload to the moment every process had logged it applied. */
export interface Window {
  start: number;
  end: number;
}

/** When ingress can have run the enqueue script for an update: from its injection to its confirmation. */
export interface Span {
  from: number;
  to: number;
}

type Phase = 'before' | 'during' | 'after';

/**
 * Where an acceptance span lies against a reload window. Only a span wholly before or
 * wholly after it tells which config the ingress that took the update was running.
 */
export function phase(span: Span, window: Window): Phase {
  if (span.to < window.start) return 'before';
  if (span.from > window.end) return 'after';
  return 'during';
}

/**
 * A route removed by one reload and added back by a later one: its deliveries are owed
 * for updates accepted before the removal or after the return, not owed for updates
 * accepted while no process had it, and optional for the rest.
 */
export function owedAcrossRemoval(span: Span, removed: Window, back: Window): Expectation {
  if (phase(span, removed) === 'before' || phase(span, back) === 'after') return 'required';
  if (phase(span, removed) === 'after' && phase(span, back) === 'before') return 'none';
  return 'optional';
}

/** A route a reload added: not owed before, owed after, optional while it was applied. */
export function owedAfterAddition(span: Span, added: Window): Expectation {
  const p = phase(span, added);
  return p === 'before' ? 'none' : p === 'after' ? 'required' : 'optional';
}
