import type { SignatureScheme } from './config.types';
import type { SecretRule } from './env-secrets';
import {
  BOT_TOKEN,
  CLIENT_TOKEN,
  HEADER_VALUE,
  MIN_SIGNING_SECRET_LENGTH,
  MIN_WHSEC_BYTES,
  SECRET_TOKEN,
} from './schema/config-rules';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const botTokenRule: SecretRule = (value) =>
  BOT_TOKEN.test(value)
    ? undefined
    : 'does not hold a bot token (digits, a colon, then at least 30 letters, digits, _ or -)';

/** Telegram's own rule for a webhook secret_token, also used for the header sent to routes. */
export const telegramSecretTokenRule: SecretRule = (value) =>
  SECRET_TOKEN.test(value) ? undefined : 'must hold 1-256 characters of A-Z, a-z, 0-9, _ and -';

export const serviceTokenRule: SecretRule = (value) =>
  HEADER_VALUE.test(value)
    ? undefined
    : 'must hold visible ASCII characters only (it is sent as the X-Service-Token header)';

export const clientTokenRule: SecretRule = (value) =>
  CLIENT_TOKEN.test(value)
    ? undefined
    : 'must hold at least 16 characters of A-Z, a-z, 0-9, _ and - (it is also part of Bot API drop-in URLs)';

export function signingSecretRule(scheme: SignatureScheme): SecretRule {
  if (scheme === 'standard-webhooks') {
    return (value) =>
      isWhsec(value)
        ? undefined
        : `must hold whsec_ and the base64 of at least ${MIN_WHSEC_BYTES} bytes (signature: standard-webhooks)`;
  }
  return (value) =>
    value.length >= MIN_SIGNING_SECRET_LENGTH
      ? undefined
      : `must hold at least ${MIN_SIGNING_SECRET_LENGTH} characters`;
}

/** The Standard Webhooks secret form: `whsec_` and base64 of the key bytes. */
function isWhsec(value: string): boolean {
  if (!value.startsWith('whsec_')) return false;
  const encoded = value.slice('whsec_'.length);
  return BASE64.test(encoded) && Buffer.from(encoded, 'base64').length >= MIN_WHSEC_BYTES;
}
