import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  createSigner,
  createVerifier,
  SIGNING_SCHEMES,
  type SigningScheme,
} from './delivery-signer';
import { signRelaygramV1 } from './relaygram-v1.scheme';
import { SignatureVerificationError } from './signature-verification.error';
import { InvalidSigningSecretError } from './signing-secret.error';
import { signStandardWebhook } from './standard-webhooks.scheme';

const NOW = 1_700_000_000;
const body = Buffer.from('{"update_id":1}');
const deliveryId = 'd-7f3a9c';
const secrets: Record<SigningScheme, string> = {
  'relaygram-v1': randomBytes(24).toString('hex'),
  'standard-webhooks': `whsec_${randomBytes(24).toString('base64')}`,
};

describe('createSigner', () => {
  it('gives the same headers as the one-shot functions', () => {
    expect(createSigner('relaygram-v1', secrets['relaygram-v1'])(body, deliveryId, NOW)).toEqual(
      signRelaygramV1(secrets['relaygram-v1'], body, NOW),
    );
    expect(
      createSigner('standard-webhooks', secrets['standard-webhooks'])(body, deliveryId, NOW),
    ).toEqual(signStandardWebhook(secrets['standard-webhooks'], deliveryId, body, NOW));
  });

  it('signs each call afresh: a new body or timestamp gives a new signature', () => {
    const sign = createSigner('relaygram-v1', secrets['relaygram-v1']);
    const first = sign(body, deliveryId, NOW);
    expect(sign(body, deliveryId, NOW)).toEqual(first);
    expect(sign(body, deliveryId, NOW + 1)['X-Webhook-Signature']).not.toBe(
      first['X-Webhook-Signature'],
    );
    expect(sign(Buffer.from('{"update_id":2}'), deliveryId, NOW)['X-Webhook-Signature']).not.toBe(
      first['X-Webhook-Signature'],
    );
  });

  it('uses the delivery id as webhook-id, verified by the reference library', () => {
    const sign = createSigner('standard-webhooks', secrets['standard-webhooks']);
    const headers = sign(body, deliveryId);
    expect(headers['webhook-id']).toBe(deliveryId);
    expect(() => new Webhook(secrets['standard-webhooks']).verify(body, headers)).not.toThrow();
  });

  it('validates the secret once, when the route is set up', () => {
    expect(() => createSigner('standard-webhooks', 'not-a-whsec')).toThrow(
      InvalidSigningSecretError,
    );
    expect(() => createSigner('relaygram-v1', '')).toThrow(InvalidSigningSecretError);
  });

  it('refuses an unknown scheme', () => {
    expect(() => createSigner('hmac-sha1' as SigningScheme, 'secret')).toThrow(
      /unknown signature scheme/,
    );
  });
});

describe('createVerifier', () => {
  it.each(SIGNING_SCHEMES)('accepts what createSigner made for %s', (scheme) => {
    const headers = createSigner(scheme, secrets[scheme])(body, deliveryId, NOW);
    const verified = createVerifier(scheme, secrets[scheme])(body, headers, { now: NOW + 300 });
    expect(verified).toMatchObject({ scheme, timestamp: NOW });
  });

  it.each(SIGNING_SCHEMES)('refuses %s signatures made with another secret', (scheme) => {
    const other =
      scheme === 'relaygram-v1' ? 'another' : `whsec_${randomBytes(24).toString('base64')}`;
    const headers = createSigner(scheme, other)(body, deliveryId, NOW);
    expect(() => createVerifier(scheme, secrets[scheme])(body, headers, { now: NOW })).toThrow(
      SignatureVerificationError,
    );
  });

  it('applies the tolerance it was built with', () => {
    const headers = createSigner('relaygram-v1', secrets['relaygram-v1'])(body, deliveryId, NOW);
    const verify = createVerifier('relaygram-v1', secrets['relaygram-v1'], {
      toleranceSeconds: 30,
    });
    expect(verify(body, headers, { now: NOW + 30 }).timestamp).toBe(NOW);
    expect(() => verify(body, headers, { now: NOW + 31 })).toThrow(/beyond the 30 s tolerance/);
    expect(() => createVerifier('relaygram-v1', 'x', { toleranceSeconds: -5 })).toThrow(RangeError);
  });

  it('refuses a signature of the other scheme', () => {
    const headers = createSigner('relaygram-v1', secrets['relaygram-v1'])(body, deliveryId, NOW);
    const verify = createVerifier('standard-webhooks', secrets['standard-webhooks']);
    expect(() => verify(body, headers, { now: NOW })).toThrow(SignatureVerificationError);
  });
});
