import { isUpdateId, webhookSecretCheck } from './bare-webhook';

describe('webhookSecretCheck', () => {
  const matches = webhookSecretCheck('s3cret-token');

  it('accepts the configured secret only', () => {
    expect(matches('s3cret-token')).toBe(true);
    expect(matches('s3cret-tokeN')).toBe(false);
    expect(matches('s3cret-token ')).toBe(false);
    expect(matches('')).toBe(false);
  });

  it('refuses a missing or repeated header', () => {
    expect(matches(undefined)).toBe(false);
    expect(matches(['s3cret-token', 's3cret-token'])).toBe(false);
  });
});

describe('isUpdateId', () => {
  it.each([0, 1, 987654321, Number.MAX_SAFE_INTEGER])('accepts %p', (value) => {
    expect(isUpdateId(value)).toBe(true);
  });

  it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '12', null, undefined, Number.NaN])(
    'refuses %p',
    (value) => {
      expect(isUpdateId(value)).toBe(false);
    },
  );
});
