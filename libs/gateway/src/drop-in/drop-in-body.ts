import type { Readable } from 'node:stream';
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

export function checkBody(kind: 'json' | 'form', body: Buffer, pathMethod: string): CheckedBody {
  return kind === 'json' ? checkJson(body, pathMethod) : checkForm(body, pathMethod);
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

/** The whole body if it has at most `limit` bytes; else undefined, the rest drained. */
export async function readLimited(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed on an early return: the request must still get its answer.
  for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      stream.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
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
