import type { Readable } from 'node:stream';
import { TelegramRequestError } from './telegram.errors';
import type { RequestBodyFailure } from './request-body';
import type { ForwardRequest } from './telegram.types';

/** A body the client sends for a call of its own (JSON, a form, multipart). */
export interface OutgoingBody {
  contentType: string;
  body: string | Buffer | Readable;
  contentLength?: number;
  failure?: () => RequestBodyFailure | undefined;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export function jsonBody(params: Record<string, unknown> | undefined): OutgoingBody {
  let body: string;
  try {
    body = JSON.stringify(params ?? {});
  } catch {
    throw new TelegramRequestError('params cannot be encoded as JSON');
  }
  return { contentType: 'application/json', body };
}

/** The headers of a forwarded request, refused when they could smuggle anything. */
export function forwardHeaders(request: ForwardRequest): Record<string, string> {
  if (request.httpMethod !== 'GET' && request.httpMethod !== 'POST') {
    throw new TelegramRequestError('forward httpMethod must be GET or POST');
  }
  if (request.httpMethod === 'GET' && request.body !== undefined) {
    throw new TelegramRequestError('a forwarded GET carries no body');
  }
  const headers: Record<string, string> = {};
  if (request.contentType !== undefined) {
    if (CONTROL_CHARS.test(request.contentType)) {
      throw new TelegramRequestError('forward contentType must not contain control characters');
    }
    headers['content-type'] = request.contentType;
  }
  const length = Buffer.isBuffer(request.body) ? request.body.length : request.contentLength;
  if (length !== undefined) {
    if (!Number.isSafeInteger(length) || length < 0) {
      throw new TelegramRequestError('forward contentLength must be a non-negative integer');
    }
    headers['content-length'] = String(length);
  }
  return headers;
}
