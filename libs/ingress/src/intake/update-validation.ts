import type { Update } from '@relaygram/routing';

export type ParsedUpdate = { ok: true; update: Update } | { ok: false; error: string };

/**
 * Whether a value can be an update_id: a non-negative integer that JSON numbers and
 * Redis bit offsets represent exactly (below 2^53). Strings, floats and negatives are
 * refused rather than coerced, so what is deduplicated is what Telegram sent.
 */
export function isUpdateId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Why `update_id` is not acceptable, or undefined when it is. */
export function updateIdProblem(value: unknown): string | undefined {
  if (value === undefined) return 'update_id is missing';
  if (typeof value !== 'number') {
    return `update_id must be a number, not ${value === null ? 'null' : typeof value}`;
  }
  if (isUpdateId(value)) return undefined;
  return 'update_id must be a non-negative integer below 2^53';
}

/**
 * Reads a webhook body as a Telegram Update: a JSON object with a valid `update_id`.
 * Nothing else is checked: unknown update types are routed, never rejected.
 */
export function parseUpdate(body: Buffer): ParsedUpdate {
  if (body.length === 0) return { ok: false, error: 'body is empty: expected a Telegram Update' };
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, error: 'body is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'body must be a JSON object (a Telegram Update)' };
  }
  const problem = updateIdProblem((value as { update_id?: unknown }).update_id);
  if (problem !== undefined) return { ok: false, error: problem };
  return { ok: true, update: value as Update };
}
