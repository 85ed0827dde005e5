import { post } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

/**
 * A path under /api/v1 that no REST route has still gets its body parsed (by Nest's own
 * parsers) before the 404; a body they refuse is the caller's mistake: a 4xx, not a 500
 * with an error line in the log.
 */
describe('REST: a body refused on a path no route has', () => {
  let h: GatewayHarness;

  beforeAll(async () => {
    h = await startGatewayHarness({ logLevel: 'info' });
  });
  afterAll(() => h.close());

  it.each([
    ['application/x-www-form-urlencoded', '__proto__=1'],
    ['application/json', '{"__proto__":{"polluted":true}}'],
    ['application/json', '{not json'],
  ])('%s %s answers 400', async (contentType, body) => {
    const res = await post(`${h.url}/api/v1/main-bot/messages`, body, {
      'content-type': contentType,
      'x-service-token': h.siteToken,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect(h.logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
