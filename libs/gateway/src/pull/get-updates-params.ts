import { parseAllowedUpdates, type AllowedUpdates } from '@relaygram/queue';

/** The Bot API server's ceiling on a long poll, in seconds. */
export const MAX_LONG_POLL_SECONDS = 50;

export interface GetUpdatesParams {
  /** Undefined or 0: nothing is confirmed. */
  offset?: number;
  /** 1-100; Telegram's default is 100. */
  limit: number;
  /** 0 (answer at once) to MAX_LONG_POLL_SECONDS. */
  timeoutSeconds: number;
  /** A new allowed_updates setting; undefined keeps the remembered one. */
  allowed?: AllowedUpdates;
}

const INTEGER_TEXT = /^\s*-?\d+\s*$/;

/**
 * getUpdates' parameters read as the Bot API server reads them, whatever the encoding
 * (query, JSON, form, multipart: every value may arrive as text): a value that is not
 * an integer counts as absent, limit and timeout are clamped into range, and
 * allowed_updates may be a JSON array or its text.
 */
export function readGetUpdatesParams(params: Readonly<Record<string, unknown>>): GetUpdatesParams {
  const offset = intParam(params['offset']);
  const limit = clamp(intParam(params['limit']) ?? 100, 1, 100);
  const timeoutSeconds = clamp(intParam(params['timeout']) ?? 0, 0, MAX_LONG_POLL_SECONDS);
  const allowed = parseAllowedUpdates(jsonParam(params['allowed_updates']));
  return {
    ...(offset ? { offset } : {}),
    limit,
    timeoutSeconds,
    ...(allowed ? { allowed } : {}),
  };
}

/** deleteWebhook's drop_pending_updates, read as Telegram reads a boolean. */
export function readDropPending(params: Readonly<Record<string, unknown>>): boolean {
  const value = params['drop_pending_updates'];
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return ['true', '1', 'yes'].includes(value.trim().toLowerCase());
  return false;
}

function intParam(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return Number(value);
  return undefined;
}

function jsonParam(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
