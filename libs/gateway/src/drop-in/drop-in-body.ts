import type { FastifyRequest } from 'fastify';
import { hasRedirectingMethod } from '../access/method-rules';
import { headerValue } from '../access/request-access';
import { parseForm } from '../rest/form-body';
import type { DropInAnswer } from '../telegram/telegram-error.mapper';
import { BAD_JSON, METHOD_PARAMETER } from './drop-in-answers';

/** JSON and form bodies are read whole to be checked; Telegram's calls are far smaller. */
export const MAX_BUFFERED_BODY = 1024 * 1024;

/** Parameters for pacing when the method is not paced: nothing is read. */
export const NO_PARAMS: Readonly<Record<string, unknown>> = Object.freeze({});

export interface CheckedBody {
  refusal?: DropInAnswer;
  params: Record<string, unknown>;
}

/**
 * The body's refusal, if any, and its parameters when `wanted` (pacing reads them).
 * A body is parsed only when it is wanted or its bytes could name a `method` parameter;
 * any other goes to Telegram unread, which answers it as its own.
 */
export function checkBody(
  kind: 'json' | 'form',
  body: Buffer,
  pathMethod: string,
  wanted = true,
): CheckedBody {
  if (!wanted && !mayNameMethod(body, kind))
    return { params: NO_PARAMS as Record<string, unknown> };
  return kind === 'json' ? checkJson(body, pathMethod) : checkForm(body, pathMethod);
}

const BACKSLASH = 0x5c;
const PERCENT = 0x25;
/** `method` in lower case; OR-ing 0x20 into an ASCII letter lower-cases it. */
const METHOD = [0x6d, 0x65, 0x74, 0x68, 0x6f, 0x64];

/**
 * Whether these bytes could carry a parameter named `method` in any letter case: the
 * six letters in a row, or anything that could spell them otherwise: an escape (`\u006d`
 * in JSON, `%6D` in a form) or a NUL byte (UTF-16 or UTF-32 text, whose letters are
 * not in a row). No other character lower-cases to these ASCII letters. Only such a
 * body is parsed for the check; the rest cannot name another method.
 */
export function mayNameMethod(body: Buffer, kind: 'json' | 'form'): boolean {
  const escape = kind === 'json' ? BACKSLASH : PERCENT;
  const last = body.length - METHOD.length;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    if (byte === escape || byte === 0) return true;
    if ((byte | 0x20) === 0x6d && i <= last && spellsMethod(body, i)) return true;
  }
  return false;
}

function spellsMethod(body: Buffer, at: number): boolean {
  for (let j = 1; j < METHOD.length; j++) {
    if (((body[at + j] as number) | 0x20) !== METHOD[j]) return false;
  }
  return true;
}

function checkJson(body: Buffer, pathMethod: string): CheckedBody {
  if (body.length === 0) return { params: {} };
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { refusal: BAD_JSON, params: {} };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { refusal: BAD_JSON, params: {} };
  }
  const params = value as Record<string, unknown>;
  return hasRedirectingMethod(Object.entries(params), pathMethod)
    ? { refusal: METHOD_PARAMETER, params }
    : { params };
}

function checkForm(body: Buffer, pathMethod: string): CheckedBody {
  const params = parseForm(body.toString('utf8'));
  return hasRedirectingMethod(Object.entries(params), pathMethod)
    ? { refusal: METHOD_PARAMETER, params }
    : { params };
}

export function queryParams(query: string): Record<string, unknown> {
  return query === '' ? {} : Object.fromEntries(new URLSearchParams(query));
}

export function rawQuery(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at + 1);
}

export function contentLength(request: FastifyRequest): number | undefined {
  const value = headerValue(request, 'content-length');
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
