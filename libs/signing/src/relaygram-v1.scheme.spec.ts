import crypto, { createHmac, randomBytes } from 'node:crypto';
import { signRelaygramV1, verifyRelaygramV1 } from './relaygram-v1.scheme';
import { thrownBy } from '@relaygram/testing';
import { SignatureVerificationError } from './signature-verification.error';
import { InvalidSigningSecretError } from './signing-secret.error';

const NOW = 1_700_000_000;
const secret = randomBytes(32).toString('hex');
const body = Buffer.from('{"update_id":42,"message":{"text":"héllo /start"}}', 'utf8');

const failure = (run: () => unknown) => thrownBy(SignatureVerificationError, run);

describe('signRelaygramV1', () => {
  it('matches an HMAC computed independently over timestamp + "." + body', () => {
    const expected = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${NOW}.`), body]))
      .digest('hex');
    expect(signRelaygramV1(secret, body, NOW)).toEqual({
      'X-Webhook-Timestamp': String(NOW),
      'X-Webhook-Signature': `v1=${expected}`,
    });
  });

  it('signs a string body as its UTF-8 bytes and accepts a Buffer secret', () => {
    expect(signRelaygramV1(Buffer.from(secret), body.toString('utf8'), NOW)).toEqual(
      signRelaygramV1(secret, body, NOW),
    );
  });

  it('uses the current time when no timestamp is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const timestamp = Number(signRelaygramV1(secret, body)['X-Webhook-Timestamp']);
    const after = Math.floor(Date.now() / 1000);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(after);
  });

  it('refuses an empty secret, a fractional timestamp and a parsed body', () => {
    expect(() => signRelaygramV1('', body, NOW)).toThrow(InvalidSigningSecretError);
    expect(() => signRelaygramV1(secret, body, NOW + 0.5)).toThrow(RangeError);
    expect(() => signRelaygramV1(secret, JSON.parse('{"a":1}') as string, NOW)).toThrow(TypeError);
  });
});

describe('verifyRelaygramV1', () => {
  const headers = signRelaygramV1(secret, body, NOW);

  it('accepts what signRelaygramV1 made and returns the signed timestamp', () => {
    expect(verifyRelaygramV1(secret, body, headers, { now: NOW })).toEqual({
      scheme: 'relaygram-v1',
      timestamp: NOW,
    });
  });

  it('reads headers case-insensitively, as arrays, and from a Fetch Headers object', () => {
    const lower = {
      'x-webhook-timestamp': [headers['X-Webhook-Timestamp']],
      'x-webhook-signature': headers['X-Webhook-Signature'],
    };
    expect(verifyRelaygramV1(secret, body, lower, { now: NOW }).timestamp).toBe(NOW);
    expect(verifyRelaygramV1(secret, body, new Headers(headers), { now: NOW }).timestamp).toBe(NOW);
  });

  it('fails when any single byte of the body changes', () => {
    for (const index of [0, Math.floor(body.length / 2), body.length - 1]) {
      const tampered = Buffer.from(body);
      tampered[index] ^= 0x01;
      expect(failure(() => verifyRelaygramV1(secret, tampered, headers, { now: NOW })).reason).toBe(
        'signature_mismatch',
      );
    }
  });

  it('fails with the wrong secret', () => {
    const error = failure(() => verifyRelaygramV1(`${secret}x`, body, headers, { now: NOW }));
    expect(error.reason).toBe('signature_mismatch');
    expect(error.header).toBe('x-webhook-signature');
  });

  it('fails when the timestamp header is changed, since it is signed', () => {
    const moved = { ...headers, 'X-Webhook-Timestamp': String(NOW + 1) };
    expect(failure(() => verifyRelaygramV1(secret, body, moved, { now: NOW })).reason).toBe(
      'signature_mismatch',
    );
  });

  it('accepts timestamps within the tolerance, inclusive, in both directions', () => {
    for (const now of [NOW - 300, NOW + 300, NOW - 1, NOW + 1]) {
      expect(verifyRelaygramV1(secret, body, headers, { now }).timestamp).toBe(NOW);
    }
    expect(
      verifyRelaygramV1(secret, body, headers, { now: NOW + 60, toleranceSeconds: 60 }),
    ).toEqual({ scheme: 'relaygram-v1', timestamp: NOW });
  });

  it('refuses a timestamp too old or too new', () => {
    expect(failure(() => verifyRelaygramV1(secret, body, headers, { now: NOW + 301 })).reason).toBe(
      'timestamp_too_old',
    );
    expect(failure(() => verifyRelaygramV1(secret, body, headers, { now: NOW - 301 })).reason).toBe(
      'timestamp_too_new',
    );
    const tight = { now: NOW + 11, toleranceSeconds: 10 };
    expect(failure(() => verifyRelaygramV1(secret, body, headers, tight)).reason).toBe(
      'timestamp_too_old',
    );
  });

  it('checks against the real clock by default', () => {
    const fresh = signRelaygramV1(secret, body);
    expect(verifyRelaygramV1(secret, body, fresh).scheme).toBe('relaygram-v1');
    const stale = signRelaygramV1(secret, body, Math.floor(Date.now() / 1000) - 3600);
    expect(failure(() => verifyRelaygramV1(secret, body, stale)).reason).toBe('timestamp_too_old');
  });

  it.each([' 1700000000', '1700000000.5', '1e9', '-1700000000', 'abc', '17000000001234567'])(
    'refuses the timestamp %p as invalid',
    (timestamp) => {
      const bad = { ...headers, 'X-Webhook-Timestamp': timestamp };
      const error = failure(() => verifyRelaygramV1(secret, body, bad, { now: NOW }));
      expect(error.reason).toBe('invalid_timestamp');
    },
  );

  it('reports which header is missing, an empty one counting as missing', () => {
    const empty = { ...headers, 'X-Webhook-Timestamp': '' };
    expect(failure(() => verifyRelaygramV1(secret, body, empty)).reason).toBe('missing_header');
    const noTimestamp = { 'X-Webhook-Signature': headers['X-Webhook-Signature'] };
    const noSignature = { 'X-Webhook-Timestamp': headers['X-Webhook-Timestamp'] };
    expect(failure(() => verifyRelaygramV1(secret, body, noTimestamp))).toMatchObject({
      reason: 'missing_header',
      header: 'x-webhook-timestamp',
    });
    expect(failure(() => verifyRelaygramV1(secret, body, noSignature))).toMatchObject({
      reason: 'missing_header',
      header: 'x-webhook-signature',
    });
  });

  describe('with several signatures (secret rotation)', () => {
    const current = headers['X-Webhook-Signature'];
    const old = signRelaygramV1('old-secret', body, NOW)['X-Webhook-Signature'];

    it.each([
      ['space-separated', `${old} ${current}`],
      ['comma-separated', `${current},${old}`],
      ['separated by comma and space', `${old}, ${current}`],
      ['next to another version', `v2=abc ${current}`],
      ['in upper-case hex', `v1=${current.slice(3).toUpperCase()}`],
    ])('accepts one valid among them: %s', (_case, value) => {
      const multi = { ...headers, 'X-Webhook-Signature': value };
      expect(verifyRelaygramV1(secret, body, multi, { now: NOW }).timestamp).toBe(NOW);
    });

    it('accepts repeated signature headers', () => {
      const repeated = { ...headers, 'X-Webhook-Signature': [old, current] };
      expect(verifyRelaygramV1(secret, body, repeated, { now: NOW }).timestamp).toBe(NOW);
      const fetchHeaders = new Headers();
      fetchHeaders.append('X-Webhook-Timestamp', String(NOW));
      fetchHeaders.append('X-Webhook-Signature', old);
      fetchHeaders.append('X-Webhook-Signature', current);
      expect(verifyRelaygramV1(secret, body, fetchHeaders, { now: NOW }).timestamp).toBe(NOW);
    });

    it('refuses when none is valid, or none is v1', () => {
      const wrong = { ...headers, 'X-Webhook-Signature': `${old} v1=deadbeef` };
      expect(failure(() => verifyRelaygramV1(secret, body, wrong, { now: NOW })).reason).toBe(
        'signature_mismatch',
      );
      const unversioned = { ...headers, 'X-Webhook-Signature': current.slice(3) };
      expect(
        failure(() => verifyRelaygramV1(secret, body, unversioned, { now: NOW })).message,
      ).toMatch(/no signature of a supported version/);
    });

    it('compares every entry even when the first one matches', () => {
      const spy = jest.spyOn(crypto, 'timingSafeEqual');
      try {
        const multi = { ...headers, 'X-Webhook-Signature': `${current} ${old} v1=00` };
        verifyRelaygramV1(secret, body, multi, { now: NOW });
        expect(spy).toHaveBeenCalledTimes(3);
      } finally {
        spy.mockRestore();
      }
    });
  });

  it('never puts the secret or the signatures in an error message', () => {
    const errors = [
      failure(() => verifyRelaygramV1(secret, Buffer.from('x'), headers, { now: NOW })),
      failure(() => verifyRelaygramV1(secret, body, headers, { now: NOW + 3600 })),
      failure(() => verifyRelaygramV1(secret, body, {}, { now: NOW })),
    ];
    const signature = headers['X-Webhook-Signature'].slice(3);
    for (const error of errors) {
      for (const text of [error.message, String(error), error.stack ?? '']) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(signature);
      }
    }
  });

  it('refuses a negative tolerance or a non-numeric now as programming errors', () => {
    expect(() => verifyRelaygramV1(secret, body, headers, { toleranceSeconds: -1 })).toThrow(
      RangeError,
    );
    expect(() => verifyRelaygramV1(secret, body, headers, { now: Number.NaN })).toThrow(RangeError);
  });
});
