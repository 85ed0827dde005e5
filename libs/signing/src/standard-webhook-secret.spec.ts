import { randomBytes } from 'node:crypto';
import { InvalidSigningSecretError } from './signing-secret.error';
import { parseStandardWebhookSecret } from './standard-webhook-secret';

function parseError(secret: string): InvalidSigningSecretError {
  try {
    parseStandardWebhookSecret(secret);
  } catch (error) {
    if (error instanceof InvalidSigningSecretError) return error;
    throw error;
  }
  throw new Error('expected an InvalidSigningSecretError');
}

describe('parseStandardWebhookSecret', () => {
  it.each([24, 32, 33, 64])('returns the %i key bytes a whsec_ secret encodes', (size) => {
    const key = randomBytes(size);
    expect(parseStandardWebhookSecret(`whsec_${key.toString('base64')}`).equals(key)).toBe(true);
  });

  it('accepts base64 without its padding, as the reference libraries do', () => {
    const key = randomBytes(32);
    const unpadded = key.toString('base64').replace(/=+$/, '');
    expect(parseStandardWebhookSecret(`whsec_${unpadded}`).equals(key)).toBe(true);
  });

  const body = randomBytes(32).toString('base64');
  it.each([
    ['no prefix', body, /must start with "whsec_"/],
    ['a different prefix', `whsk_${body}`, /must start with "whsec_"/],
    ['an upper-case prefix', `WHSEC_${body}`, /must start with "whsec_"/],
    ['a trailing newline', `whsec_${body}\n`, /standard base64/],
    ['spaces', `whsec_${body.slice(0, 8)} ${body.slice(8)}`, /standard base64/],
    ['url-safe characters', `whsec_${body.replace(/[+/]/g, '-')}-_`, /standard base64/],
    ['a dangling character', `whsec_${randomBytes(33).toString('base64')}A`, /standard base64/],
    ['nothing after the prefix', 'whsec_', /encode 24 to 64 bytes, this one encodes 0/],
    ['a 16-byte key', `whsec_${randomBytes(16).toString('base64')}`, /this one encodes 16/],
    ['a 65-byte key', `whsec_${randomBytes(65).toString('base64')}`, /this one encodes 65/],
  ])('refuses a secret with %s, without quoting it', (_case, secret, message) => {
    const error = parseError(secret);
    expect(error.message).toMatch(message);
    const revealing = secret
      .replace(/^whsec_/i, '')
      .trim()
      .slice(0, 12);
    for (const text of [error.message, String(error), error.stack ?? '']) {
      if (revealing.length > 0) expect(text).not.toContain(revealing);
    }
  });

  it('refuses a value that is not a string', () => {
    expect(() => parseStandardWebhookSecret(undefined as unknown as string)).toThrow(
      InvalidSigningSecretError,
    );
  });
});
