import { randomInt } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TelegramEmulator, fuzzParameters } from '@relaygram/testing';
import fc from 'fast-check';
import { request } from 'undici';
import {
  jsonOrUndefined,
  TestInstall,
  webhookSecret,
  type IngressInstance,
} from './support/test-install';

/**
 * The webhook endpoint is the one door of Relaygram open to the internet. Whatever is
 * posted to it (random bytes, deep or huge JSON, wrong types, odd unicode, duplicate
 * keys, numbers past 2^53, any content type, any secret header), it answers 202 or a
 * 4xx, never a 5xx, never crashes, and a request it refuses leaves nothing in Redis:
 * no delivery and no dedup mark (the same update sent properly afterwards is queued).
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
const SECRET = webhookSecret();
let nextId = randomInt(1_000_000, 1_000_000_000);

interface Shot {
  path: string;
  headers: Record<string, string | string[]>;
  /** undefined: no body at all (no Content-Length either). */
  body: Buffer | undefined;
  /** The update carried, when the body is a valid one (for the no-trace check). */
  update?: Record<string, unknown>;
}

const message = (text: string) => ({
  update_id: nextId++,
  message: {
    message_id: randomInt(1, 1e6),
    from: { id: 42, is_bot: false, first_name: 'F' },
    chat: { id: randomInt(1, 50), type: 'private' },
    date: 1_732_874_400,
    text,
  },
});

const nested = (depth: number, open: string, inner: string, close: string) =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** Bodies: each kind of thing a sender could post, valid updates included. */
const bodies: fc.Arbitrary<{ body: Buffer | undefined; update?: Record<string, unknown> }> =
  fc.oneof(
    fc.constant({ body: undefined }),
    fc.uint8Array({ maxLength: 2048 }).map((bytes) => ({ body: Buffer.from(bytes) })),
    fc.json({ maxDepth: 4 }).map((text) => ({ body: Buffer.from(text) })),
    // The update_id is given when the request is sent: fast-check runs a failing case
    // again while shrinking, and a reused id would come back `duplicate`.
    fc.string({ unit: 'binary', maxLength: 300 }).map((text) => ({
      body: Buffer.alloc(0),
      update: message(text),
    })),
    fc
      .constantFrom(
        '9007199254740993',
        '9007199254740992',
        '1e400',
        '-0',
        '-1',
        '1.5',
        '0x10',
        '"12"',
        'null',
        'true',
        '[]',
        '{}',
        '123456789012345678901234567890',
      )
      .map((id) => ({ body: Buffer.from(`{"update_id":${id},"message":{"text":"x"}}`) })),
    fc
      .constantFrom(
        // Duplicate keys: JSON.parse keeps the last; the update still has one id.
        `{"update_id":1,"update_id":"2","message":{}}`,
        `{"update_id":"1","update_id":${Number.MAX_SAFE_INTEGER},"message":{"chat":{"id":1},"chat":null}}`,
        `{"update_id":3,"__proto__":{"update_id":4},"constructor":{"x":1}}`,
        '{"update_id":5,"message":"\\ud800\\udfff\\ud800"}',
        '\ufeff{"update_id":6,"message":{}}',
        '{"update_id":7,"message":{"text":"\u0000\u2028\u2029"}}',
        '{"update_id":8}',
        '{"update_id":9,"message":{}} trailing',
        '{"update_id":10,',
        '',
      )
      .map((text) => ({ body: Buffer.from(text) })),
    fc
      .constantFrom(10, 1_000, 50_000, 200_000)
      .chain((depth) =>
        fc.constantFrom(
          `{"update_id":${nextId++},"message":${nested(depth, '{"a":', '1', '}')}}`,
          `{"update_id":${nextId++},"message":{"x":${nested(depth, '[', '', ']')}}}`,
          nested(depth, '[', '', ']'),
        ),
      )
      .map((text) => ({ body: Buffer.from(text) })),
    fc.constantFrom(1024 * 1024 - 200, 1024 * 1024 + 1, 3 * 1024 * 1024).map((size) => ({
      body: Buffer.from(`{"update_id":${nextId++},"message":{"text":"${'x'.repeat(size)}"}}`),
    })),
  );

const contentTypes = fc.constantFrom<string | undefined>(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data',
  'application/octet-stream',
  '*/*',
  '',
  ';;;',
  'application/json; charset="',
  'a/b/c',
  undefined,
);

const secretHeaders = fc.constantFrom<string | string[] | undefined>(
  SECRET,
  SECRET,
  SECRET,
  undefined,
  '',
  `${SECRET} `,
  SECRET.slice(1),
  SECRET.toUpperCase(),
  `${SECRET}\t`,
  `\t${SECRET}`,
  [SECRET, SECRET],
  'x'.repeat(300),
);

const paths = fc.constantFrom(
  '/webhooks/telegram/shop',
  '/webhooks/telegram/shop',
  '/webhooks/telegram/shop',
  '/webhooks/telegram',
  '/webhooks/telegram/shop/',
  '/webhooks/telegram/SHOP',
  '/webhooks/telegram/poller',
  '/webhooks/telegram/nobody',
  '/webhooks/telegram/%2e%2e',
  '/webhooks/telegram/sh%6fp',
  '/webhooks/telegram/shop?x=1',
);

const shots: fc.Arbitrary<Shot> = fc
  .record({ path: paths, contentType: contentTypes, secret: secretHeaders, body: bodies })
  .map(({ path, contentType, secret, body }) => {
    const headers: Record<string, string | string[]> = {};
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (secret !== undefined) headers['x-telegram-bot-api-secret-token'] = secret;
    return { path, headers, body: body.body, update: body.update };
  });

const ALLOWED = new Set([202, 400, 401, 404, 413]);

describe('webhook endpoint: arbitrary requests (fuzz)', () => {
  let emulator: TelegramEmulator;
  let install: TestInstall;
  let ingress: IngressInstance;
  let queuedDeliveries = 0;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    emulator = await TelegramEmulator.start();
    const shop = emulator.addBot({ username: 'fuzz_shop_bot' });
    const poller = emulator.addBot();
    install = new TestInstall({
      apiBase: emulator.apiRoot,
      bots: [
        {
          id: 'shop',
          mode: 'webhook',
          token: shop.token,
          username: shop.username,
          default: true,
          webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret: SECRET },
        },
        { id: 'poller', mode: 'polling', token: poller.token },
      ],
      routes: [
        { name: 'all', ordering: 'chat' },
        { name: 'envelope', format: 'envelope', ordering: 'strict' },
        { name: 'texts', match: { update_types: ['message'] }, ordering: 'none' },
      ],
    });
    await install.ready();
    ingress = await install.start();
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await install.cleanup();
    await emulator.stop();
  });

  async function send(shot: Shot): Promise<{ status: number; json: unknown; text: string }> {
    const res = await request(`${ingress.url}${shot.path}`, {
      method: 'POST',
      headers: shot.headers,
      body: shot.body,
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: jsonOrUndefined(text), text };
  }

  function count(answer: { status: number; json: unknown }): void {
    if (answer.status !== 202) return;
    const deliveries = (answer.json as { deliveries?: unknown }).deliveries;
    if (typeof deliveries === 'number') queuedDeliveries += deliveries;
  }

  async function storedDeliveries(): Promise<number> {
    let total = 0;
    for (const route of ['all', 'envelope', 'texts']) {
      for (const lane of await install.lanesOf(route)) {
        total += await install.redis.llen(install.keys.lane(lane));
      }
    }
    return total;
  }

  it('answers 202 or 4xx with JSON, and a refused request leaves no trace', async () => {
    await fc.assert(
      fc.asyncProperty(shots, async (generated) => {
        const update = generated.update && { ...generated.update, update_id: nextId++ };
        const shot = update
          ? { ...generated, update, body: Buffer.from(JSON.stringify(update)) }
          : generated;
        const answer = await send(shot);
        // A path no route has (a trailing slash, a `..` segment) meets Fastify's own body
        // parsing before its 404: a content type Fastify does not know is a 415 there.
        const routed = !shot.path.endsWith('/') && !shot.path.includes('%2e');
        const allowed = routed ? [...ALLOWED] : [...ALLOWED, 415];
        if (!allowed.includes(answer.status))
          throw new Error(`answered ${answer.status}: ${answer.text}`);
        expect(answer.json).toEqual(expect.any(Object));
        count(answer);
        if (answer.status !== 202 && shot.update) {
          // The same update, sent properly: refused before, so it must be new now.
          const retry = await send({
            path: '/webhooks/telegram/shop',
            headers: {
              'content-type': 'application/json',
              'x-telegram-bot-api-secret-token': SECRET,
            },
            body: Buffer.from(JSON.stringify(shot.update)),
          });
          if (retry.status !== 202 || (retry.json as { status?: unknown }).status !== 'queued') {
            throw new Error(
              `refused with ${answer.status} (${answer.text}), yet the same update sent properly then was answered ${retry.status} ${retry.text}`,
            );
          }
          count(retry);
        }
      }),
      fuzzParameters(400),
    );
    expect(await storedDeliveries()).toBe(queuedDeliveries);
    expect((await ingress.healthz()).status).toBe(200);
    expect(unhandled).toEqual([]);
  }, 120_000);

  it('keeps its heap flat over thousands of requests', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const kind = i % 4;
        const answer = await send({
          path: kind === 3 ? '/webhooks/telegram/nobody' : '/webhooks/telegram/shop',
          headers: {
            'content-type': 'application/json',
            'x-telegram-bot-api-secret-token': kind === 2 ? 'wrong' : SECRET,
          },
          body: Buffer.from(kind === 1 ? '{"update_id":"x"}' : JSON.stringify(message(`m${i}`))),
        });
        count(answer);
      }
    };
    await burst(500);
    gc();
    const before = process.memoryUsage().heapUsed;
    await burst(3000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Generous: a leak of a request object per request would be tens of MB here.
    expect(grown).toBeLessThan(24 * 1024 * 1024);
    expect(await storedDeliveries()).toBe(queuedDeliveries);
  }, 120_000);
});
