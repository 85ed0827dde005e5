import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { fuzzParameters } from '@relaygram/testing';
import { request } from 'undici';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

/**
 * The gateway parses what services send it: REST bodies (JSON, forms, multipart), drop-in
 * paths, query strings and bodies of any encoding, download paths. Whatever arrives, it
 * answers without a 5xx of its own (a 502 only relays a Telegram error, as the spec
 * says), never lets a refused call reach Telegram, never echoes a token, and its heap
 * stays flat.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
interface Shot {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

type Token = 'site' | 'narrow' | 'wrong' | 'none' | 'bot';

const REST_PATHS = [
  'messages/send',
  'messages/edit',
  'messages/edit-markup',
  'messages/delete',
  'messages/forward',
  'messages/copy',
  'photos/send',
  'documents/send',
  'callbacks/answer',
  'chat-actions/send',
  'raw/sendMessage',
  'raw/getMe',
  'raw/SENDMESSAGE',
  'raw/getUpdates',
  'raw/GetUpdates',
  'raw/logOut',
  'raw/close',
  'raw/setWebhook',
  'raw/deleteWebhook',
  'raw/send_message',
  'raw/sendMessage%2F..%2FgetUpdates',
  'raw/..%2FgetUpdates',
  'messages',
  'messages/send/extra',
  'nothing/here',
];
const METHODS = [
  'getMe',
  'sendMessage',
  'sendPhoto',
  'sendDocument',
  'getFile',
  'getUpdates',
  'GETUPDATES',
  'logOut',
  'close',
  'setWebhook',
  'deleteWebhook',
  'test/getMe',
  'sendMessage/x',
  'send%4Dessage',
  'get-me',
  '',
  '..%2FgetUpdates',
  '%2e%2e/getMe',
];

const jsonValue = fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown);
const paramValue = fc.oneof(
  fc.integer(),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(2 ** 53 + 1, -1, 0, '', 'getUpdates', '{"a":1}', 'attach://photo'),
  jsonValue,
);
const params = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'chat_id',
      'text',
      'message_id',
      'from_chat_id',
      'options',
      'photo',
      'document',
      'callback_query_id',
      'action',
      'reply_markup',
      'method',
      'parse_mode',
      '__proto__',
    ),
    fc.string({ maxLength: 12 }),
  ),
  paramValue,
  { maxKeys: 6 },
);

/** Multipart bodies, well-formed or broken in the ways a careless or hostile client breaks them. */
const multipart = fc
  .record({
    fields: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('chat_id', 'caption', 'method', 'options', 'photo'),
          fc.string({ maxLength: 10 }),
        ),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
      { maxLength: 5 },
    ),
    file: fc.option(
      fc.record({
        field: fc.constantFrom('photo', 'document', 'chat_id', 'x'),
        filename: fc.oneof(
          fc.constantFrom(
            '../../etc/passwd',
            '..\\..\\boot.ini',
            '/abs/path.png',
            'a\u0000b.png',
            'quote".png',
            'name\r\nX-Injected: 1',
            '',
            'x'.repeat(5000),
            '%2e%2e%2fx',
            'фото.png',
            '\u202etxt.exe',
          ),
          fc.string({ unit: 'binary', maxLength: 30 }),
        ),
        bytes: fc.uint8Array({ maxLength: 2000 }),
      }),
      { nil: undefined },
    ),
    breakage: fc.constantFrom(
      'none',
      'none',
      'no-boundary',
      'wrong-boundary',
      'truncated',
      'huge-header',
      'many-parts',
      'lf-only',
      'no-closing',
      'file-first',
    ),
    cut: fc.nat(),
  })
  .map(({ fields, file, breakage, cut }) => {
    const boundary = 'fuzzBoundary7MA4YWxkTrZu0gW';
    const eol = breakage === 'lf-only' ? '\n' : '\r\n';
    const field = (name: string, value: string) =>
      `--${boundary}${eol}Content-Disposition: form-data; name="${name}"${eol}${eol}${value}${eol}`;
    const parts: Buffer[] = [];
    const filePart = () =>
      file
        ? Buffer.concat([
            Buffer.from(
              `--${boundary}${eol}Content-Disposition: form-data; name="${file.field}"; filename="${file.filename}"${eol}` +
                `Content-Type: image/png${eol}${eol}`,
            ),
            Buffer.from(file.bytes),
            Buffer.from(eol),
          ])
        : Buffer.alloc(0);
    if (breakage === 'file-first') parts.push(filePart());
    for (const [name, value] of fields) parts.push(Buffer.from(field(name, value)));
    if (breakage === 'huge-header') {
      parts.push(
        Buffer.from(
          `--${boundary}${eol}Content-Disposition: form-data; name="x"${eol}X-Long: ${'h'.repeat(200_000)}${eol}${eol}v${eol}`,
        ),
      );
    }
    if (breakage === 'many-parts') {
      for (let i = 0; i < 2000; i++) parts.push(Buffer.from(field(`f${i}`, String(i))));
    }
    if (breakage !== 'file-first') parts.push(filePart());
    if (breakage !== 'no-closing') parts.push(Buffer.from(`--${boundary}--${eol}`));
    let body = Buffer.concat(parts);
    if (breakage === 'truncated' && body.length > 0) body = body.subarray(0, cut % body.length);
    const contentType =
      breakage === 'no-boundary'
        ? 'multipart/form-data'
        : breakage === 'wrong-boundary'
          ? 'multipart/form-data; boundary=other'
          : `multipart/form-data; boundary=${boundary}`;
    return { contentType, body };
  });

const encodings = fc.oneof(
  params.map((p) => ({ contentType: 'application/json', body: Buffer.from(JSON.stringify(p)) })),
  jsonValue.map((v) => ({
    contentType: 'application/json',
    body: Buffer.from(JSON.stringify(v) ?? ''),
  })),
  params.map((p) => ({
    contentType: 'application/x-www-form-urlencoded',
    body: Buffer.from(
      Object.entries(p)
        .map(
          ([k, v]) =>
            `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
        )
        .join('&'),
    ),
  })),
  multipart,
  fc.record({
    contentType: fc.constantFrom(
      'text/plain',
      'application/json; charset=utf-16',
      'application/octet-stream',
      'x/y; a=b',
      ';;',
      'application/json, multipart/form-data',
    ),
    body: fc.uint8Array({ maxLength: 1000 }).map((b) => Buffer.from(b)),
  }),
  fc.constant({
    contentType: 'application/json',
    body: Buffer.from('{"chat_id":1,"text":"'.padEnd(200_000, 'x')),
  }),
);

const queryString = fc
  .array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 20 })), {
    maxLength: 4,
  })
  .map((pairs) =>
    pairs.length
      ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
      : '',
  );

describe('gateway: arbitrary REST and drop-in requests (fuzz)', () => {
  let h: GatewayHarness;
  let secrets: string[];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    h = await startGatewayHarness({
      gateway: { telegramTimeoutMs: 5_000, uploadLimitBytes: 256 * 1024 },
      // Paced, with room for the thousands of sends to one chat the heap test makes.
      outbound: { per_second: 100000, per_chat_per_second: 1000, chat_burst: 1000 },
    });
    secrets = [h.main, h.other, h.lonely].flatMap((bot) => [
      bot.token,
      bot.token.slice(bot.token.indexOf(':') + 1),
    ]);
    secrets.push(h.siteToken, h.narrowToken);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await h.close();
  });

  const tokenOf = (token: Token): string | undefined =>
    token === 'site'
      ? h.siteToken
      : token === 'narrow'
        ? h.narrowToken
        : token === 'wrong'
          ? `${h.siteToken.slice(0, -1)}x`
          : token === 'bot'
            ? h.main.token
            : undefined;

  async function fire(shot: Shot): Promise<{ status: number; text: string; calls: number }> {
    const before = h.emulator.calls().length;
    const res = await request(`${h.url}${shot.path}`, {
      method: shot.method,
      headers: shot.headers,
      body: shot.body,
      headersTimeout: 20_000,
      bodyTimeout: 20_000,
    });
    const text = `${JSON.stringify(res.headers)}\n${await res.body.text()}`;
    return { status: res.statusCode, text, calls: h.emulator.calls().length - before };
  }

  /**
   * REST: a 502 only relays Telegram's own error; drop-in: a 5xx only passes on what
   * Telegram (the emulator, asked the same thing with the real token) answers itself.
   */
  async function checkAnswer(
    answer: { status: number; text: string; calls: number },
    dropIn?: { shot: Shot; token: string },
  ): Promise<void> {
    const body = answer.text.slice(answer.text.indexOf('\n') + 1);
    if (answer.status >= 500) {
      let relayed: boolean;
      if (dropIn) {
        const direct = await request(
          `${h.emulator.apiRoot}${dropIn.shot.path.replace(/^\/bot[^/]+/, `/bot${dropIn.token}`)}`,
          { method: dropIn.shot.method, headers: dropIn.shot.headers, body: dropIn.shot.body },
        );
        await direct.body.dump();
        relayed = direct.statusCode === answer.status;
      } else {
        relayed = answer.status === 502 && answer.calls > 0 && /"error":"ETELEGRAM: /.test(body);
      }
      if (!relayed) throw new Error(`answered ${answer.status} on its own: ${body.slice(0, 300)}`);
    }
    if (
      answer.status === 401 ||
      (answer.status === 403 &&
        /reserved|Forbidden: (this client|the client)|forbidden/i.test(body))
    ) {
      if (answer.calls !== 0)
        throw new Error(`refused with ${answer.status}, yet Telegram was called`);
    }
    for (const secret of secrets) {
      if (answer.text.includes(secret))
        throw new Error(`a token came back in a ${answer.status} answer`);
    }
  }

  it('REST: any path, token, encoding and body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'main-bot/',
          'other-bot/',
          'lonely-bot/',
          'nobody/',
          '',
          'MAIN-BOT/',
          '..%2F',
        ),
        fc.constantFrom(...REST_PATHS),
        fc.constantFrom<Token>('site', 'site', 'narrow', 'wrong', 'none', 'bot'),
        encodings,
        async (bot, path, token, encoding) => {
          const headers: Record<string, string> = { 'content-type': encoding.contentType };
          const value = tokenOf(token);
          if (value !== undefined) headers['x-service-token'] = value;
          const answer = await fire({
            method: 'POST',
            path: `/api/v1/${bot}${path}`,
            headers,
            body: encoding.body,
          });
          await checkAnswer(answer);
        },
      ),
      fuzzParameters(250),
    );
    expect(unhandled).toEqual([]);
  }, 120_000);

  it('drop-in: any method name, query, encoding and body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Token>('site', 'site', 'narrow', 'wrong', 'bot'),
        fc.constantFrom('main', 'other', 'lonely', 'unknown'),
        fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 }).map(encodeURIComponent)),
        queryString,
        fc.constantFrom<Shot['method']>('GET', 'POST', 'POST', 'PUT', 'DELETE'),
        fc.option(encodings, { nil: undefined }),
        async (token, botName, method, query, verb, encoding) => {
          const bot =
            botName === 'main'
              ? h.main
              : botName === 'other'
                ? h.other
                : botName === 'lonely'
                  ? h.lonely
                  : undefined;
          const id = bot?.id ?? 4242;
          const credential =
            token === 'bot' ? (bot?.token ?? h.main.token) : `${id}:${tokenOf(token)}`;
          const headers: Record<string, string> = {};
          if (encoding) headers['content-type'] = encoding.contentType;
          const shot: Shot = {
            method: verb,
            path: `/bot${credential}/${method}${query}`,
            headers,
            body: verb === 'GET' ? undefined : encoding?.body,
          };
          const answer = await fire(shot);
          await checkAnswer(answer, { shot, token: bot?.token ?? h.main.token });
        },
      ),
      fuzzParameters(250),
    );
    expect(unhandled).toEqual([]);
  }, 120_000);

  it('drop-in downloads: any file path stays under the bot file path', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(
            '../bot/getMe',
            '..%2F..%2Fbot%2FgetMe',
            '%2e%2e/%2e%2e/getMe',
            'photos/..%5C..%5Cx',
            '/etc/passwd',
            '%2Fetc%2Fpasswd',
            'photos\\file.jpg',
            'photos/%00.jpg',
            'a//b',
            './a',
            'photos/file_1.jpg?x=../y',
          ),
          fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
          fc
            .array(fc.constantFrom('..', '.', '%2e%2e', 'a', '%2F', '%5C', ''), { maxLength: 6 })
            .map((s) => s.join('/')),
        ),
        async (filePath) => {
          const shot: Shot = {
            method: 'GET',
            path: `/file/bot${h.main.id}:${h.siteToken}/${filePath}`,
            headers: {},
          };
          const answer = await fire(shot);
          await checkAnswer(answer, { shot, token: h.main.token });
          // No such file exists: a 200 would mean the path reached something else (getMe...).
          expect([400, 404]).toContain(answer.status);
        },
      ),
      fuzzParameters(200),
    );
  }, 60_000);

  it('keeps its heap flat over thousands of calls', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const kind = i % 4;
        await fire({
          method: 'POST',
          path:
            kind === 3 ? `/bot${h.main.id}:${h.siteToken}/getMe` : '/api/v1/main-bot/messages/send',
          headers: {
            'content-type': 'application/json',
            'x-service-token': kind === 1 ? 'wrong' : h.siteToken,
          },
          body: Buffer.from(
            kind === 2 ? '{"chat_id":' : JSON.stringify({ chat_id: 7, text: `m${i}` }),
          ),
        });
      }
    };
    await burst(300);
    gc();
    const before = process.memoryUsage().heapUsed;
    await burst(2000);
    gc();
    // Generous: a leak of a request object per call would be tens of MB here.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(24 * 1024 * 1024);
  }, 120_000);
});
