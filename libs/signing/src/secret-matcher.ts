import { hash, timingSafeEqual } from 'node:crypto';

/** A secret or a presented credential: strings are compared as their UTF-8 bytes. */
export type SecretInput = string | Buffer;

/** Returns the index of the matching secret; -1 when none matches. */
export type SecretMatcher = (candidate: SecretInput | undefined) => number;

/** One-shot `hash` costs about half of a Hash object's update and digest, on every call. */
function sha256(value: SecretInput): Buffer {
  return hash('sha256', value, 'buffer');
}

function isEmpty(value: SecretInput): boolean {
  return value.length === 0;
}

/**
 * Compares two values in time independent of where they differ and of their lengths:
 * both sides are hashed with SHA-256 first, so `timingSafeEqual` always sees 32 bytes
 * and a length mismatch is not revealed by an early throw or return.
 */
export function safeEqual(a: SecretInput, b: SecretInput): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * Every digest is compared, even after a match, so the time taken does not reveal which
 * configured secret (first, last, none) the candidate is.
 */
function scan(candidateDigest: Buffer, digests: readonly (Buffer | undefined)[]): number {
  let found = -1;
  for (let i = 0; i < digests.length; i++) {
    const digest = digests[i];
    // An empty configured secret is a configuration mistake; it must never authenticate.
    // The comparison still runs, against the candidate itself, to keep the work per slot even.
    const equal = timingSafeEqual(digest ?? candidateDigest, candidateDigest);
    if (equal && digest !== undefined && found === -1) found = i;
  }
  return found;
}

/**
 * Builds a matcher that hashes the configured secrets once; each call hashes only the
 * candidate. A missing or empty candidate never matches, and neither does an empty secret,
 * so an unset header can never pass against a blank configuration value.
 */
export function createSecretMatcher(secrets: readonly SecretInput[]): SecretMatcher {
  const digests = secrets.map((secret) => (isEmpty(secret) ? undefined : sha256(secret)));
  return (candidate) => {
    if (candidate === undefined || isEmpty(candidate)) return -1;
    return scan(sha256(candidate), digests);
  };
}

/**
 * One-shot form of {@link createSecretMatcher}, for call sites that are not hot.
 * Returns the index of the first secret equal to the candidate, or -1.
 */
export function matchSecret(
  candidate: SecretInput | undefined,
  secrets: readonly SecretInput[],
): number {
  return createSecretMatcher(secrets)(candidate);
}
