import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { thrownBy } from '@relaygram/testing';
import { SignatureVerificationError } from './signature-verification.error';
import { InvalidSigningSecretError } from './signing-secret.error';
import { signStandardWebhook, verifyStandardWebhook } from './standard-webhooks.scheme';

const NOW = 1_700_000_000;
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
const id = 'dlv_01HZX3K4T5V6W7Y8Z9';
const body = Buffer.from('{"update_id":7,"message":{"text":"привет","chat":{"id":-100}}}');

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

const failure = (run: () => unknown) => thrownBy(SignatureVerificationError, run);

describe('signStandardWebhook', () => {
  it('produces the three headers with a v1 signature', () => {
    const headers = signStandardWebhook(secret, id, body, NOW);
    expect(Object.keys(headers).sort()).toEqual([
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toBe(String(NOW));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('matches the signature the reference library computes for the same input', () => {
    const reference = new Webhook(secret).sign(id, new Date(NOW * 1000), body);
    expect(signStandardWebhook(secret, id, body, NOW)['webhook-signature']).toBe(reference);
  });

  it('matches the published test vector of the reference libraries', () => {
    const headers = signStandardWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      '{"test": 2432232314}',
      1614265330,
    );
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it.each(['', 'has.dot', 'has space', 'line\nbreak', 'ünïcode'])(
    'refuses the webhook id %p',
    (badId) => {
      expect(() => signStandardWebhook(secret, badId, body, NOW)).toThrow(RangeError);
    },
  );

  it('refuses a malformed secret', () => {
    const malformed = `whsec_${randomBytes(8).toString('hex')}!`;
    expect(() => signStandardWebhook(malformed, id, body, NOW)).toThrow(InvalidSigningSecretError);
  });
});

describe('interoperability with the standardwebhooks reference package', () => {
  it('the reference verifies our headers', () => {
    const headers = signStandardWebhook(secret, id, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body.toString()));
  });

  it('the reference refuses our headers under another secret', () => {
    const headers = signStandardWebhook(secret, id, body);
    expect(() => new Webhook(otherSecret).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  it('we verify headers signed by the reference', () => {
    const timestamp = new Date();
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
    };
    expect(verifyStandardWebhook(secret, body, headers)).toEqual({
      scheme: 'standard-webhooks',
      id,
      timestamp: Math.floor(timestamp.getTime() / 1000),
    });
    expect(failure(() => verifyStandardWebhook(otherSecret, body, headers)).reason).toBe(
      'signature_mismatch',
    );
  });

  it('agrees with the reference in both directions for arbitrary bodies, ids and keys', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        (payload, msgId, key) => {
          const whsec = `whsec_${Buffer.from(key).toString('base64')}`;
          const reference = new Webhook(whsec);
          const now = nowSeconds();
          const ours = signStandardWebhook(whsec, msgId, Buffer.from(payload, 'utf8'), now);
          expect(() => reference.verify(payload, ours, { jsonParse: false })).not.toThrow();
          const theirs = {
            'webhook-id': msgId,
            'webhook-timestamp': String(now),
            'webhook-signature': reference.sign(msgId, new Date(now * 1000), payload),
          };
          expect(verifyStandardWebhook(whsec, payload, theirs).id).toBe(msgId);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('verifyStandardWebhook', () => {
  const headers = signStandardWebhook(secret, id, body, NOW);

  it('accepts its own headers, from a record or a Fetch Headers object', () => {
    const expected = { scheme: 'standard-webhooks', id, timestamp: NOW };
    expect(verifyStandardWebhook(secret, body, headers, { now: NOW })).toEqual(expected);
    expect(verifyStandardWebhook(secret, body, new Headers(headers), { now: NOW })).toEqual(
      expected,
    );
    const shouting = {
      'Webhook-Id': id,
      'WEBHOOK-TIMESTAMP': String(NOW),
      'Webhook-Signature': headers['webhook-signature'],
    };
    expect(verifyStandardWebhook(secret, body, shouting, { now: NOW })).toEqual(expected);
  });

  it('fails when any single byte of the body changes', () => {
    for (const index of [0, 20, body.length - 1]) {
      const tampered = Buffer.from(body);
      tampered[index] ^= 0x80;
      expect(
        failure(() => verifyStandardWebhook(secret, tampered, headers, { now: NOW })).reason,
      ).toBe('signature_mismatch');
    }
  });

  it('fails with the wrong secret, or a changed id', () => {
    expect(
      failure(() => verifyStandardWebhook(otherSecret, body, headers, { now: NOW })),
    ).toMatchObject({ reason: 'signature_mismatch', header: 'webhook-signature' });
    const otherId = { ...headers, 'webhook-id': `${id}x` };
    expect(failure(() => verifyStandardWebhook(secret, body, otherId, { now: NOW })).reason).toBe(
      'signature_mismatch',
    );
  });

  it('accepts timestamps inside the 5-minute tolerance and refuses those outside', () => {
    expect(verifyStandardWebhook(secret, body, headers, { now: NOW + 300 }).timestamp).toBe(NOW);
    expect(verifyStandardWebhook(secret, body, headers, { now: NOW - 300 }).timestamp).toBe(NOW);
    expect(
      failure(() => verifyStandardWebhook(secret, body, headers, { now: NOW + 301 })).reason,
    ).toBe('timestamp_too_old');
    expect(
      failure(() => verifyStandardWebhook(secret, body, headers, { now: NOW - 301 })).reason,
    ).toBe('timestamp_too_new');
  });

  it('accepts one valid signature among several, space-delimited, other versions skipped', () => {
    const old = signStandardWebhook(otherSecret, id, body, NOW)['webhook-signature'];
    const asymmetric = `v1a,${randomBytes(64).toString('base64')}`;
    for (const value of [
      `${old} ${headers['webhook-signature']}`,
      `${headers['webhook-signature']} ${asymmetric} ${old}`,
      `${asymmetric}  ${headers['webhook-signature']}`,
    ]) {
      const multi = { ...headers, 'webhook-signature': value };
      expect(verifyStandardWebhook(secret, body, multi, { now: NOW }).id).toBe(id);
    }
    const repeated = { ...headers, 'webhook-signature': [old, headers['webhook-signature']] };
    expect(verifyStandardWebhook(secret, body, repeated, { now: NOW }).id).toBe(id);
    const noneValid = { ...headers, 'webhook-signature': `${old} ${asymmetric}` };
    expect(failure(() => verifyStandardWebhook(secret, body, noneValid, { now: NOW })).reason).toBe(
      'signature_mismatch',
    );
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const)(
    'reports a missing %s',
    (name) => {
      const partial: Record<string, string> = { ...headers };
      delete partial[name];
      expect(
        failure(() => verifyStandardWebhook(secret, body, partial, { now: NOW })),
      ).toMatchObject({ reason: 'missing_header', header: name });
    },
  );

  it('refuses a timestamp that is not whole seconds', () => {
    const millis = { ...headers, 'webhook-timestamp': `${NOW}000` };
    expect(failure(() => verifyStandardWebhook(secret, body, millis, { now: NOW })).reason).toBe(
      'timestamp_too_new',
    );
    const fraction = { ...headers, 'webhook-timestamp': `${NOW}.0` };
    expect(failure(() => verifyStandardWebhook(secret, body, fraction, { now: NOW })).reason).toBe(
      'invalid_timestamp',
    );
  });

  it('never puts the secret, its key or the signature in an error message', () => {
    const key = secret.slice('whsec_'.length);
    const signature = headers['webhook-signature'].slice(3);
    const errors = [
      failure(() => verifyStandardWebhook(secret, Buffer.from('{}'), headers, { now: NOW })),
      failure(() => verifyStandardWebhook(secret, body, headers, { now: NOW - 3600 })),
      failure(() => verifyStandardWebhook(secret, body, {}, { now: NOW })),
    ];
    for (const error of errors) {
      for (const text of [error.message, String(error), error.stack ?? '']) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(signature);
      }
    }
  });
});
