import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { fuzzParameters } from '@relaygram/testing';
import { Webhook } from 'standardwebhooks';
import {
  RELAYGRAM_V1_SIGNATURE_HEADER,
  RELAYGRAM_V1_TIMESTAMP_HEADER,
  signRelaygramV1,
  verifyRelaygramV1,
} from './relaygram-v1.scheme';
import { SignatureVerificationError } from './signature-verification.error';
import { signStandardWebhook, verifyStandardWebhook } from './standard-webhooks.scheme';

/**
 * What a receiver relies on: a signed delivery verifies only as sent and only for five
 * minutes. Any changed byte (body, signature, timestamp, id) or an older timestamp makes
 * the `verify...` helpers throw SignatureVerificationError.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
const SECRET = randomBytes(32).toString('base64url');
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const NOW = 1_750_000_000;

const body = fc.uint8Array({ minLength: 1, maxLength: 600 }).map((b) => Buffer.from(b));
/** A position and a non-zero XOR: the byte there is certainly different afterwards. */
const flip = fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 }));

function flipped(bytes: Buffer, [at, xor]: [number, number]): Buffer {
  const copy = Buffer.from(bytes);
  const i = at % copy.length;
  copy[i] = (copy[i] as number) ^ xor;
  return copy;
}

function flippedText(text: string, change: [number, number]): string {
  return flipped(Buffer.from(text, 'latin1'), change).toString('latin1');
}

function rejects(verify: () => unknown): boolean {
  try {
    verify();
    return false;
  } catch (error) {
    if (error instanceof SignatureVerificationError) return true;
    throw error;
  }
}

describe('signed deliveries: verify rejects any change and anything older than 5 minutes', () => {
  describe('relaygram-v1', () => {
    const verify = (b: Buffer, headers: Record<string, string>, now = NOW) =>
      verifyRelaygramV1(SECRET, b, headers, { now });

    it('verifies as sent, up to 300 s either way', () => {
      fc.assert(
        fc.property(body, fc.integer({ min: -300, max: 300 }), (b, skew) => {
          const headers = { ...signRelaygramV1(SECRET, b, NOW + skew) };
          expect(() => verify(b, headers)).not.toThrow();
        }),
        fuzzParameters(300),
      );
    });

    it('rejects a changed body, signature or timestamp byte', () => {
      fc.assert(
        fc.property(
          body,
          flip,
          fc.constantFrom('body', 'signature', 'timestamp'),
          (b, change, what) => {
            const headers: Record<string, string> = { ...signRelaygramV1(SECRET, b, NOW) };
            if (what === 'body')
              expect(rejects(() => verify(flipped(b, change), headers))).toBe(true);
            else {
              const name =
                what === 'signature'
                  ? RELAYGRAM_V1_SIGNATURE_HEADER
                  : RELAYGRAM_V1_TIMESTAMP_HEADER;
              const value = headers[name] as string;
              const changed = flippedText(value, change);
              // Hex is read without regard to case: `v1=AB` is the signature `v1=ab`.
              fc.pre(changed.toLowerCase() !== value.toLowerCase());
              expect(rejects(() => verify(b, { ...headers, [name]: changed }))).toBe(true);
            }
          },
        ),
        fuzzParameters(500),
      );
    });

    it('rejects a signature older (or newer) than 5 minutes, and another secret', () => {
      fc.assert(
        fc.property(
          body,
          fc.integer({ min: 301, max: 10 ** 7 }),
          fc.boolean(),
          (b, age, future) => {
            const headers = { ...signRelaygramV1(SECRET, b, future ? NOW + age : NOW - age) };
            expect(rejects(() => verify(b, headers))).toBe(true);
            const fresh = { ...signRelaygramV1(randomBytes(32).toString('base64url'), b, NOW) };
            expect(rejects(() => verify(b, fresh))).toBe(true);
          },
        ),
        fuzzParameters(200),
      );
    });
  });

  describe('standard-webhooks', () => {
    const verify = (b: Buffer, headers: Record<string, string>, now = NOW) =>
      verifyStandardWebhook(WHSEC, b, headers, { now });

    it('verifies as sent, and so does the reference library', () => {
      fc.assert(
        fc.property(body, fc.uuid(), (b, id) => {
          const headers = { ...signStandardWebhook(WHSEC, id, b, NOW) };
          expect(() => verify(b, headers)).not.toThrow();
        }),
        fuzzParameters(200),
      );
      const b = Buffer.from('{"update_id":1,"message":{"text":"x"}}');
      const headers = { ...signStandardWebhook(WHSEC, 'msg_1', b, Math.floor(Date.now() / 1000)) };
      expect(new Webhook(WHSEC).verify(b.toString('utf8'), headers)).toEqual(
        JSON.parse(b.toString()),
      );
    });

    it('rejects a changed body, id, signature or timestamp byte', () => {
      fc.assert(
        fc.property(
          body,
          flip,
          fc.constantFrom('body', 'webhook-id', 'webhook-signature', 'webhook-timestamp'),
          (b, change, what) => {
            const headers: Record<string, string> = {
              ...signStandardWebhook(WHSEC, 'd6f1c5a0-6f0e-4a39-9d44-3f1e7d1b2c3a', b, NOW),
            };
            if (what === 'body') {
              expect(rejects(() => verify(flipped(b, change), headers))).toBe(true);
            } else {
              const value = headers[what] as string;
              expect(
                rejects(() => verify(b, { ...headers, [what]: flippedText(value, change) })),
              ).toBe(true);
            }
          },
        ),
        fuzzParameters(500),
      );
    });

    it('rejects a signature more than 5 minutes away', () => {
      fc.assert(
        fc.property(
          body,
          fc.integer({ min: 301, max: 10 ** 7 }),
          fc.boolean(),
          (b, age, future) => {
            const headers = {
              ...signStandardWebhook(WHSEC, 'id-1', b, future ? NOW + age : NOW - age),
            };
            expect(rejects(() => verify(b, headers))).toBe(true);
          },
        ),
        fuzzParameters(200),
      );
    });
  });
});
