import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { serveChild } from './child-runtime';

/**
 * Reference B4 (not a target of the issue): the floor of any HTTP proxy on this
 * machine. Plain Fastify takes the body as bytes and relays it with undici over a
 * keep-alive pool, swapping nothing but the token in the path; the answer goes back
 * as received. What the gateway costs beyond this is its own work (auth, scoping,
 * validation, logging, metrics).
 */
let app: FastifyInstance | undefined;
let pool: Pool | undefined;

async function start({
  apiRoot,
  token,
}: {
  apiRoot: string;
  token: string;
}): Promise<{ url: string }> {
  const upstream = new Pool(apiRoot, { connections: 128, keepAliveTimeout: 60_000 });
  pool = upstream;
  app = Fastify({ bodyLimit: 1024 * 1024 });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
    done(null, body),
  );
  app.post<{ Params: { method: string }; Body: Buffer }>(
    '/proxy/:method',
    async (request, reply) => {
      const res = await upstream.request({
        method: 'POST',
        path: `/bot${token}/${request.params.method}`,
        headers: { 'content-type': 'application/json' },
        body: request.body,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return reply.code(res.statusCode).header('content-type', 'application/json').send(body);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

serveChild({ start }, async () => {
  await app?.close();
  await pool?.close();
});
