import { Body, Controller, Module, Post } from '@nestjs/common';
import { request } from 'undici';
import { post } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

/** Stands in for another feature's routes (ingress' webhook) in the same Fastify instance. */
@Controller('probe')
class ProbeController {
  @Post('echo')
  echo(@Body() body: unknown) {
    return { body: body ?? null };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

/**
 * The gateway's parsers (multipart, pass-through bodies, its JSON and form parsers)
 * and error handlers live in encapsulated plugins: the other routes of the process
 * parse exactly as Nest alone would have them do.
 */
describe('the gateway beside other features', () => {
  let h: GatewayHarness;
  const probe = (body: string | Buffer, contentType?: string) =>
    post(`${h.url}/probe/echo`, body, contentType ? { 'content-type': contentType } : {});

  beforeAll(async () => {
    h = await startGatewayHarness({ extraModules: [ProbeModule] });
  });
  afterAll(() => h.close());

  it('leaves JSON parsing of other routes as it was', async () => {
    const res = await probe('{"update_id":1}', 'application/json');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ body: { update_id: 1 } });
    const form = await probe('a=1&b=2', 'application/x-www-form-urlencoded');
    expect(form.body).toMatchObject({ body: { a: '1', b: '2' } });
  });

  it('adds no multipart, text or catch-all parser to them', async () => {
    const multipart = await probe(
      '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
      'multipart/form-data; boundary=x',
    );
    expect(multipart.status).toBe(415);
    const text = await probe('hello', 'application/octet-stream');
    expect(text.status).toBe(415);
  });

  it('keeps the 1 MiB body limit and the error shape of other routes', async () => {
    const large = await probe(JSON.stringify({ x: 'y'.repeat(1024 * 1024) }), 'application/json');
    expect(large.status).toBe(413);
    const bad = await probe('{', 'application/json');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400 });
  });

  it('serves its own routes with its own parsers at the same time', async () => {
    const rest = await post(
      `${h.url}/api/v1/messages/send`,
      { chat_id: 1, text: 'x' },
      { 'x-service-token': h.siteToken },
    );
    expect(rest.status).toBe(200);
    const dropIn = await request(`${h.url}/bot${h.dropInToken(h.main)}/getMe`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'ignored by Telegram',
    });
    expect(dropIn.statusCode).toBe(200);
    await dropIn.body.dump();
  });
});
