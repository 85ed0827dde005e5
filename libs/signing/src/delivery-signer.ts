import type { HeadersLike } from './header-lookup';
import type { SignedBody } from './hmac-digest';
import {
  relaygramV1Key,
  signRelaygramV1WithKey,
  verifyRelaygramV1WithKey,
  type RelaygramV1Verification,
} from './relaygram-v1.scheme';
import { toleranceOf, type VerifyOptions } from './signature-timestamp';
import {
  signStandardWebhookWithKey,
  standardWebhookKey,
  verifyStandardWebhookWithKey,
  type StandardWebhookVerification,
} from './standard-webhooks.scheme';

/** The `routes[].signature` values of the config. */
export type SigningScheme = 'relaygram-v1' | 'standard-webhooks';

export const SIGNING_SCHEMES: readonly SigningScheme[] = ['relaygram-v1', 'standard-webhooks'];

/**
 * Signs one attempt: returns the headers to add. `deliveryId` becomes `webhook-id` for
 * standard-webhooks and is not part of a relaygram-v1 signature.
 */
export type DeliverySigner = (
  body: SignedBody,
  deliveryId: string,
  nowSeconds?: number,
) => Record<string, string>;

export type VerifiedSignature = RelaygramV1Verification | StandardWebhookVerification;

export type DeliveryVerifier = (
  body: SignedBody,
  headers: HeadersLike,
  options?: Pick<VerifyOptions, 'now'>,
) => VerifiedSignature;

function unknownScheme(scheme: never): never {
  throw new RangeError(`unknown signature scheme ${JSON.stringify(scheme)}`);
}

/**
 * Prepares a route's signer once (secret validated and decoded, key imported), so the
 * per-attempt cost is one HMAC over the body. Throws `InvalidSigningSecretError` here,
 * at route set-up, rather than at the first delivery.
 */
export function createSigner(scheme: SigningScheme, secret: string): DeliverySigner {
  switch (scheme) {
    case 'relaygram-v1': {
      const key = relaygramV1Key(secret);
      return (body, _deliveryId, nowSeconds) => signRelaygramV1WithKey(key, body, nowSeconds);
    }
    case 'standard-webhooks': {
      const key = standardWebhookKey(secret);
      return (body, deliveryId, nowSeconds) =>
        signStandardWebhookWithKey(key, deliveryId, body, nowSeconds);
    }
    default:
      return unknownScheme(scheme);
  }
}

/** The receiving side of {@link createSigner}, with the key prepared once. */
export function createVerifier(
  scheme: SigningScheme,
  secret: string,
  options?: Pick<VerifyOptions, 'toleranceSeconds'>,
): DeliveryVerifier {
  const toleranceSeconds = toleranceOf(options);
  switch (scheme) {
    case 'relaygram-v1': {
      const key = relaygramV1Key(secret);
      return (body, headers, call) =>
        verifyRelaygramV1WithKey(key, body, headers, { toleranceSeconds, now: call?.now });
    }
    case 'standard-webhooks': {
      const key = standardWebhookKey(secret);
      return (body, headers, call) =>
        verifyStandardWebhookWithKey(key, body, headers, { toleranceSeconds, now: call?.now });
    }
    default:
      return unknownScheme(scheme);
  }
}
