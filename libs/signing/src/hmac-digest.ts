import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { safeEqual } from './secret-matcher';
import { SignatureVerificationError } from './signature-verification.error';

/** The exact bytes sent (or received). A string is taken as its UTF-8 encoding. */
export type SignedBody = Buffer | Uint8Array | string;

export function assertSignedBody(body: unknown): asserts body is SignedBody {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError(
      'the body to sign or verify must be the raw bytes (Buffer or string), not a parsed object',
    );
  }
}

/**
 * Imported once per route: signing then reuses the key object instead of copying and
 * re-importing the secret bytes at every attempt.
 */
export function hmacKey(bytes: Buffer): KeyObject {
  return createSecretKey(bytes);
}

/**
 * HMAC-SHA256 of `prefix` followed by the body. The body goes into the HMAC as a second
 * update, so a large body is never copied into a concatenated buffer.
 */
export function hmacSha256(key: KeyObject, prefix: string, body: SignedBody): Buffer {
  assertSignedBody(body);
  return createHmac('sha256', key).update(prefix, 'utf8').update(body).digest();
}

/**
 * Throws unless one of the presented signatures equals the expected one. Every entry is
 * compared, so the time taken does not depend on which of them (if any) is the valid one.
 */
export function requireMatchingSignature(
  expected: string,
  presented: readonly string[],
  header: string,
): void {
  let matched = false;
  for (const signature of presented) {
    matched = safeEqual(signature, expected) || matched;
  }
  if (matched) return;
  throw new SignatureVerificationError(
    'signature_mismatch',
    header,
    presented.length === 0
      ? `${header} carries no signature of a supported version`
      : `no signature in ${header} matches the body, timestamp and secret`,
  );
}
