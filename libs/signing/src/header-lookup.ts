import { SignatureVerificationError } from './signature-verification.error';

/** Node's `IncomingHttpHeaders` (Fastify, Express, node:http) fits this shape. */
export interface HeaderRecord {
  readonly [name: string]: string | readonly string[] | undefined;
}

/** The part of the Fetch API `Headers` class that is needed here. */
export interface FetchHeaders {
  get(name: string): string | null;
}

export type HeadersLike = HeaderRecord | FetchHeaders;

function isFetchHeaders(headers: HeadersLike): headers is FetchHeaders {
  return typeof headers.get === 'function';
}

/**
 * Reads a header case-insensitively. Repeated values are joined with ", " as the Fetch
 * API does, so both header sources give the same string; an empty value counts as absent.
 */
export function readHeader(headers: HeadersLike, name: string): string | undefined {
  const wanted = name.toLowerCase();
  if (isFetchHeaders(headers)) return headers.get(wanted) || undefined;
  const values: string[] = [];
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value = headers[key];
    if (typeof value === 'string') values.push(value);
    else if (value !== undefined) values.push(...value);
  }
  return values.join(', ') || undefined;
}

export function requireHeader(headers: HeadersLike, name: string): string {
  const value = readHeader(headers, name);
  if (value === undefined) {
    throw new SignatureVerificationError('missing_header', name, `${name} header is missing`);
  }
  return value;
}
