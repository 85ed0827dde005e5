import { readHeader } from './header-lookup';

describe('readHeader', () => {
  it('finds a header whatever the case of its name', () => {
    expect(readHeader({ 'X-Webhook-Timestamp': '1' }, 'x-webhook-timestamp')).toBe('1');
    expect(readHeader({ 'x-webhook-timestamp': '2' }, 'X-Webhook-Timestamp')).toBe('2');
  });

  it('joins repeated values with ", " like the Fetch API', () => {
    expect(readHeader({ 'webhook-signature': ['a', 'b'] }, 'webhook-signature')).toBe('a, b');
    expect(
      readHeader({ 'Webhook-Signature': 'a', 'webhook-signature': 'b' }, 'webhook-signature'),
    ).toBe('a, b');
    const fetchHeaders = new Headers();
    fetchHeaders.append('webhook-signature', 'a');
    fetchHeaders.append('Webhook-Signature', 'b');
    expect(readHeader(fetchHeaders, 'WEBHOOK-SIGNATURE')).toBe('a, b');
  });

  it('treats absent, undefined, empty and empty-array values as missing', () => {
    expect(readHeader({}, 'webhook-id')).toBeUndefined();
    expect(readHeader({ 'webhook-id': undefined }, 'webhook-id')).toBeUndefined();
    expect(readHeader({ 'webhook-id': '' }, 'webhook-id')).toBeUndefined();
    expect(readHeader({ 'webhook-id': [] }, 'webhook-id')).toBeUndefined();
    expect(readHeader(new Headers(), 'webhook-id')).toBeUndefined();
  });

  it('does not mistake a header named "get" for a Fetch Headers object', () => {
    expect(readHeader({ get: 'x', 'webhook-id': 'y' }, 'webhook-id')).toBe('y');
  });
});
