import { InvalidSigningSecretError } from './signing-secret.error';

export const STANDARD_WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The Standard Webhooks spec asks for 24 to 64 random bytes (192 to 512 bits). */
export const STANDARD_WEBHOOK_SECRET_MIN_BYTES = 24;
export const STANDARD_WEBHOOK_SECRET_MAX_BYTES = 64;

// Standard base64, padding optional as in the reference libraries. Checked up front because
// Buffer.from(..., 'base64') silently skips stray characters (a trailing newline from an
// env file, a pasted quote) and would derive a key the receiver's library never would.
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/**
 * Validates a `whsec_<base64>` secret and returns the HMAC key it encodes. Errors say
 * what is wrong with the format and never quote the value.
 */
export function parseStandardWebhookSecret(secret: string): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(STANDARD_WEBHOOK_SECRET_PREFIX)) {
    throw new InvalidSigningSecretError(
      `a standard-webhooks secret must start with "${STANDARD_WEBHOOK_SECRET_PREFIX}"`,
    );
  }
  const encoded = secret.slice(STANDARD_WEBHOOK_SECRET_PREFIX.length);
  if (!BASE64_PATTERN.test(encoded)) {
    throw new InvalidSigningSecretError(
      `the part of a standard-webhooks secret after "${STANDARD_WEBHOOK_SECRET_PREFIX}" must be ` +
        'standard base64 (A-Z a-z 0-9 + / and = padding, no spaces or line breaks)',
    );
  }
  const key = Buffer.from(encoded, 'base64');
  if (
    key.length < STANDARD_WEBHOOK_SECRET_MIN_BYTES ||
    key.length > STANDARD_WEBHOOK_SECRET_MAX_BYTES
  ) {
    throw new InvalidSigningSecretError(
      `a standard-webhooks secret must encode ${STANDARD_WEBHOOK_SECRET_MIN_BYTES} to ` +
        `${STANDARD_WEBHOOK_SECRET_MAX_BYTES} bytes, this one encodes ${key.length}`,
    );
  }
  return key;
}
