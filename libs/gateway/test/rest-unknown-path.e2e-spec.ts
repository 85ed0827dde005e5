import { post } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

/**
 * A path under /api/v1 that no REST route has answers 404 whatever its body: the body
 * is never parsed, so one a parser would refuse (or that tries prototype pollution) is
 * neither a 400 nor a 500 with an error line in the log.
 */
describe('REST: a body a parser would refuse, on a path no route has', () => {
  let h: GatewayHarness;

  beforeAll(async () => {
    h = await startGatewayHarness({ logLevel: 'info' });
  });
  afterAll(() => h.close());

  it.each([
    ['application/x-www-form-urlencoded', '__proto__=1'],
    ['application/json', '{"__proto__":{"polluted":true}}'],
    ['application/json', '{not json'],
  ])('%s %s answers 404', async (contentType, body) => {
    const res = await post(`${h.url}/api/v1/main-bot/messages`, body, {
      'content-type': contentType,
      'x-service-token': h.siteToken,
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found' });
    expect(h.logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
