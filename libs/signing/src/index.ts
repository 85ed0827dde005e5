/**
 * Delivery signatures, and the one secret comparison of Relaygram.
 *
 * Comparing a presented secret with configured ones (the Telegram webhook secret header,
 * gateway client tokens, the admin token): import `createSecretMatcher` (hot paths; it
 * hashes the configured secrets once) or `matchSecret`/`safeEqual` from here. They
 * implement SPEC section 6: SHA-256 of both sides, `timingSafeEqual` on the digests,
 * against every candidate without early exit. Do not write another comparison.
 *
 * Signing deliveries (dispatcher): `createSigner(route.signature, secret)` once per route,
 * then call it at every attempt with the exact bytes sent.
 *
 * Receiving them (target services, tests, the demo): `verifyRelaygramV1`,
 * `verifyStandardWebhook` or `createVerifier`, with the raw body bytes; the default
 * tolerance is 5 minutes either way. Failures throw `SignatureVerificationError`.
 */
export { safeEqual, matchSecret, createSecretMatcher } from './secret-matcher';
export type { SecretInput, SecretMatcher } from './secret-matcher';

export {
  createSigner,
  createVerifier,
  SIGNING_SCHEMES,
  type SigningScheme,
  type DeliverySigner,
  type DeliveryVerifier,
  type VerifiedSignature,
} from './delivery-signer';

export {
  signRelaygramV1,
  verifyRelaygramV1,
  RELAYGRAM_V1_TIMESTAMP_HEADER,
  RELAYGRAM_V1_SIGNATURE_HEADER,
  type RelaygramV1Headers,
  type RelaygramV1Verification,
} from './relaygram-v1.scheme';

export {
  signStandardWebhook,
  verifyStandardWebhook,
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  type StandardWebhookHeaders,
  type StandardWebhookVerification,
} from './standard-webhooks.scheme';

export {
  parseStandardWebhookSecret,
  STANDARD_WEBHOOK_SECRET_PREFIX,
  STANDARD_WEBHOOK_SECRET_MIN_BYTES,
  STANDARD_WEBHOOK_SECRET_MAX_BYTES,
} from './standard-webhook-secret';

export { DEFAULT_TOLERANCE_SECONDS, type VerifyOptions } from './signature-timestamp';
export {
  SignatureVerificationError,
  type SignatureFailureReason,
} from './signature-verification.error';
export { InvalidSigningSecretError } from './signing-secret.error';
export type { HeadersLike, HeaderRecord, FetchHeaders } from './header-lookup';
export type { SignedBody } from './hmac-digest';
