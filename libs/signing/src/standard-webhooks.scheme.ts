import type { KeyObject } from 'node:crypto';
import { requireHeader, type HeadersLike } from './header-lookup';
import { hmacKey, hmacSha256, requireMatchingSignature, type SignedBody } from './hmac-digest';
import {
  checkTimestamp,
  signingTimestamp,
  toleranceOf,
  type VerifyOptions,
} from './signature-timestamp';
import { parseStandardWebhookSecret } from './standard-webhook-secret';

export const STANDARD_WEBHOOK_ID_HEADER = 'webhook-id';
export const STANDARD_WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

export type StandardWebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export interface StandardWebhookVerification {
  readonly scheme: 'standard-webhooks';
  /** The signed `webhook-id`: Relaygram's delivery id, stable across retries. */
  readonly id: string;
  /** The signed `webhook-timestamp`, unix seconds. */
  readonly timestamp: number;
}

/** Symmetric (HMAC) signatures; `v1a` is the spec's asymmetric variant, not used here. */
const SYMMETRIC_VERSION = 'v1';

// Printable ASCII without spaces, and no "." because the signed content is
// `{id}.{timestamp}.{body}`: the spec forbids dots in the id so fields cannot shift.
const WEBHOOK_ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]+$/;

export function standardWebhookKey(secret: string): KeyObject {
  return hmacKey(parseStandardWebhookSecret(secret));
}

function standardWebhookSignature(
  key: KeyObject,
  id: string,
  timestamp: string,
  body: SignedBody,
): string {
  return hmacSha256(key, `${id}.${timestamp}.`, body).toString('base64');
}

export function signStandardWebhookWithKey(
  key: KeyObject,
  id: string,
  body: SignedBody,
  timestampSeconds?: number,
): StandardWebhookHeaders {
  if (typeof id !== 'string' || !WEBHOOK_ID_PATTERN.test(id)) {
    throw new RangeError('webhook-id must be non-empty printable ASCII without spaces or "."');
  }
  const timestamp = String(signingTimestamp(timestampSeconds));
  const signature = standardWebhookSignature(key, id, timestamp, body);
  return {
    [STANDARD_WEBHOOK_ID_HEADER]: id,
    [STANDARD_WEBHOOK_TIMESTAMP_HEADER]: timestamp,
    [STANDARD_WEBHOOK_SIGNATURE_HEADER]: `${SYMMETRIC_VERSION},${signature}`,
  };
}

/**
 * `v1,<base64>` entries of the space-delimited signature header. A trailing comma is
 * dropped from each entry because repeated headers arrive joined with ", ". Entries of
 * other versions (`v1a,...`) are skipped, as the spec lets a sender mix them.
 */
export function parseStandardWebhookSignatures(value: string): string[] {
  const signatures: string[] = [];
  for (const entry of value.split(/\s+/)) {
    const token = entry.endsWith(',') ? entry.slice(0, -1) : entry;
    const comma = token.indexOf(',');
    if (comma > 0 && token.slice(0, comma) === SYMMETRIC_VERSION) {
      signatures.push(token.slice(comma + 1));
    }
  }
  return signatures;
}

export function verifyStandardWebhookWithKey(
  key: KeyObject,
  body: SignedBody,
  headers: HeadersLike,
  options?: VerifyOptions,
): StandardWebhookVerification {
  const tolerance = toleranceOf(options);
  const id = requireHeader(headers, STANDARD_WEBHOOK_ID_HEADER);
  const timestampValue = requireHeader(headers, STANDARD_WEBHOOK_TIMESTAMP_HEADER);
  const signatureValue = requireHeader(headers, STANDARD_WEBHOOK_SIGNATURE_HEADER);
  const timestamp = checkTimestamp(
    STANDARD_WEBHOOK_TIMESTAMP_HEADER,
    timestampValue,
    tolerance,
    options,
  );
  const expected = standardWebhookSignature(key, id, timestampValue, body);
  requireMatchingSignature(
    expected,
    parseStandardWebhookSignatures(signatureValue),
    STANDARD_WEBHOOK_SIGNATURE_HEADER,
  );
  return { scheme: 'standard-webhooks', id, timestamp };
}

/**
 * Signs one delivery attempt per the Standard Webhooks spec: HMAC-SHA256 over
 * `{id}.{timestamp}.{body}`, keyed with the bytes the `whsec_` secret encodes. For the
 * dispatcher's hot path use `createSigner`, which decodes the secret once.
 */
export function signStandardWebhook(
  secret: string,
  id: string,
  body: SignedBody,
  timestampSeconds?: number,
): StandardWebhookHeaders {
  return signStandardWebhookWithKey(standardWebhookKey(secret), id, body, timestampSeconds);
}

/**
 * Verifies a Standard Webhooks request against the raw body bytes. Throws
 * {@link SignatureVerificationError} with a `reason` when it does not verify.
 */
export function verifyStandardWebhook(
  secret: string,
  body: SignedBody,
  headers: HeadersLike,
  options?: VerifyOptions,
): StandardWebhookVerification {
  return verifyStandardWebhookWithKey(standardWebhookKey(secret), body, headers, options);
}
