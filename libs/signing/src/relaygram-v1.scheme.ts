import type { KeyObject } from 'node:crypto';
import { requireHeader, type HeadersLike } from './header-lookup';
import { hmacKey, hmacSha256, requireMatchingSignature, type SignedBody } from './hmac-digest';
import {
  checkTimestamp,
  signingTimestamp,
  toleranceOf,
  type VerifyOptions,
} from './signature-timestamp';
import { InvalidSigningSecretError } from './signing-secret.error';

export const RELAYGRAM_V1_TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
export const RELAYGRAM_V1_SIGNATURE_HEADER = 'X-Webhook-Signature';

export type RelaygramV1Headers = {
  'X-Webhook-Timestamp': string;
  'X-Webhook-Signature': string;
};

export interface RelaygramV1Verification {
  readonly scheme: 'relaygram-v1';
  /** The signed `X-Webhook-Timestamp`, unix seconds. */
  readonly timestamp: number;
}

const VERSION_PREFIX = 'v1=';

export function relaygramV1Key(secret: string | Buffer): KeyObject {
  if (secret.length === 0) {
    throw new InvalidSigningSecretError('a relaygram-v1 signing secret must not be empty');
  }
  return hmacKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
}

function relaygramV1Signature(key: KeyObject, timestamp: string, body: SignedBody): string {
  return hmacSha256(key, `${timestamp}.`, body).toString('hex');
}

export function signRelaygramV1WithKey(
  key: KeyObject,
  body: SignedBody,
  timestampSeconds?: number,
): RelaygramV1Headers {
  const timestamp = String(signingTimestamp(timestampSeconds));
  return {
    [RELAYGRAM_V1_TIMESTAMP_HEADER]: timestamp,
    [RELAYGRAM_V1_SIGNATURE_HEADER]: `${VERSION_PREFIX}${relaygramV1Signature(key, timestamp, body)}`,
  };
}

/**
 * `v1=` entries of the signature header, separated by spaces or commas; several entries
 * let a sender sign with an old and a new secret during rotation. Entries of other
 * versions are skipped so a future scheme can be added alongside without breaking
 * receivers. Hex is compared lower-cased.
 */
export function parseRelaygramV1Signatures(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .filter((entry) => entry.startsWith(VERSION_PREFIX))
    .map((entry) => entry.slice(VERSION_PREFIX.length).toLowerCase());
}

export function verifyRelaygramV1WithKey(
  key: KeyObject,
  body: SignedBody,
  headers: HeadersLike,
  options?: VerifyOptions,
): RelaygramV1Verification {
  const tolerance = toleranceOf(options);
  const timestampValue = requireHeader(headers, RELAYGRAM_V1_TIMESTAMP_HEADER);
  const signatureValue = requireHeader(headers, RELAYGRAM_V1_SIGNATURE_HEADER);
  const timestamp = checkTimestamp(
    RELAYGRAM_V1_TIMESTAMP_HEADER,
    timestampValue,
    tolerance,
    options,
  );
  // The HMAC covers the timestamp exactly as received, which is what the sender signed.
  const expected = relaygramV1Signature(key, timestampValue, body);
  requireMatchingSignature(
    expected,
    parseRelaygramV1Signatures(signatureValue),
    RELAYGRAM_V1_SIGNATURE_HEADER,
  );
  return { scheme: 'relaygram-v1', timestamp };
}

/**
 * Signs one delivery attempt: `X-Webhook-Signature: v1=<hex HMAC-SHA256(secret,
 * timestamp + "." + body)>`. For the dispatcher's hot path use `createSigner`, which
 * prepares the key once.
 */
export function signRelaygramV1(
  secret: string | Buffer,
  body: SignedBody,
  timestampSeconds?: number,
): RelaygramV1Headers {
  return signRelaygramV1WithKey(relaygramV1Key(secret), body, timestampSeconds);
}

/**
 * Verifies a relaygram-v1 request against the raw body bytes. Throws
 * {@link SignatureVerificationError} with a `reason` when it does not verify.
 */
export function verifyRelaygramV1(
  secret: string | Buffer,
  body: SignedBody,
  headers: HeadersLike,
  options?: VerifyOptions,
): RelaygramV1Verification {
  return verifyRelaygramV1WithKey(relaygramV1Key(secret), body, headers, options);
}
