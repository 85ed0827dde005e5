import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import type { RelaygramConfig } from '@relaygram/config';
import {
  readBody,
  sendJson,
  startFakeTelegram,
  type FakeHandler,
  type FakeTelegram,
} from '../test/fake-telegram.server';
import { generatedStream } from '../test/generated-stream';
import { testSecret } from '../test/test-secret';
import { TelegramClient } from './telegram-client';
import { TelegramClients } from './telegram-clients';
import {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramRequestError,
  TelegramTimeoutError,
} from './telegram.errors';
import type { TelegramCallEvent } from './telegram.types';
import { closedPort } from '@relaygram/testing';

const TOKEN = '7123456789:AAHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF';
const SECRET_HALF = TOKEN.split(':')[1];
const OUR_ERRORS = [
  TelegramError,
  TelegramNetworkError,
  TelegramTimeoutError,
  TelegramAbortError,
  TelegramRequestError,
];

/** Every rendering of an error a log line, a response or a crash report could use. */
function renderings(error: unknown): string[] {
  const texts = [
    String(error),
    JSON.stringify(error),
    inspect(error, { depth: 10 }),
    inspect(error, { depth: 10, showHidden: true }),
  ];
  for (let current: unknown = error, depth = 0; current && depth < 10; depth++) {
    if (current instanceof Error) {
      texts.push(current.message, current.stack ?? '');
      current = current.cause;
    } else {
      texts.push(inspect(current, { depth: 10 }));
      current = undefined;
    }
  }
  return texts;
}

function leaks(value: unknown): boolean {
  return renderings(value).some((t) => t.includes(TOKEN) || t.includes(SECRET_HALF));
}

async function caught(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  return new Error('no error was thrown');
}

/** A stream that fails with an error whose message carries the token, as a careless caller's might. */
function failingStream(): Readable {
  const stream = new Readable({ read() {} });
  stream.push(Buffer.alloc(2048));
  setImmediate(() =>
    stream.destroy(Object.assign(new Error(`upload of /bot${TOKEN}/x failed`), { code: 'EIO' })),
  );
  return stream;
}

const echoPath: FakeHandler = (seen, _req, res) =>
  sendJson(res, 400, {
    ok: false,
    error_code: 400,
    description: `Bad Request: unknown path ${seen.url} (${decodeURIComponent(seen.url)})`,
  });

const htmlEchoingPath: FakeHandler = (seen, _req, res) => {
  res.writeHead(502, { 'content-type': 'text/html' });
  res.end(`<html><body>502 Bad Gateway for ${seen.url}</body></html>`);
};

const resetMidAnswer: FakeHandler = (_seen, req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
  res.write('{"ok":true,', () => setTimeout(() => req.socket.destroy(), 10));
};

const stallAfterHeaders: FakeHandler = (_seen, _req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100' });
  res.write(Buffer.alloc(10));
};

const neverAnswer: FakeHandler = () => undefined;

const redirectWithPath: FakeHandler = (seen, _req, res) => {
  res.writeHead(302, {
    location: `https://elsewhere.example${seen.url}`,
    'content-type': 'text/html',
  });
  res.end(`moved to ${seen.url}`);
};

describe('token confidentiality', () => {
  let tg: FakeTelegram;
  let events: TelegramCallEvent[];
  const clients: TelegramClient[] = [];

  function client(apiBase = tg.url): TelegramClient {
    const created = new TelegramClient({
      apiBase,
      token: testSecret(TOKEN),
      botId: 'sol-prod',
      timeoutMs: 2_000,
      onCall: (event) => events.push(event),
    });
    clients.push(created);
    return created;
  }

  function serve(handler: FakeHandler): TelegramClient {
    tg.handle(handler);
    return client();
  }

  beforeAll(async () => {
    tg = await startFakeTelegram();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.destroy()));
    await tg.close();
  });

  it('never shows the token in any error, error rendering or call event', async () => {
    events = [];
    const downPort = await closedPort();
    const scenarios: Record<string, () => Promise<unknown>> = {
      'ok:false whose description echoes the path': () =>
        caught(() => serve(echoPath).call('sendMessage', { chat_id: 1 })),
      'urlencoded ok:false echoing the path': () =>
        caught(() => serve(echoPath).callUrlencoded('sendMessage', { chat_id: 1 })),
      'HTML 502 echoing the path': () => caught(() => serve(htmlEchoingPath).call('getMe')),
      'redirect with the path in Location': () =>
        caught(() => serve(redirectWithPath).call('getMe')),
      'connection refused': () => caught(() => client(`http://127.0.0.1:${downPort}`).getMe()),
      'connection refused, forward': () =>
        caught(() =>
          client(`http://127.0.0.1:${downPort}`).forward('getMe', { httpMethod: 'GET' }),
        ),
      'connection refused, download': () =>
        caught(() => client(`http://127.0.0.1:${downPort}`).downloadFile('a/b.jpg')),
      'connection refused, streamed forward body': () =>
        caught(() =>
          client(`http://127.0.0.1:${downPort}`).forward('sendDocument', {
            httpMethod: 'POST',
            body: Readable.from([Buffer.alloc(100_000)]),
          }),
        ),
      'connection refused, multipart': () =>
        caught(() =>
          client(`http://127.0.0.1:${downPort}`).callMultipart('sendDocument', { chat_id: 1 }, [
            { field: 'document', filename: 'a', stream: Readable.from([Buffer.alloc(100_000)]) },
          ]),
        ),
      'connection reset during an upload': () =>
        caught(() =>
          serve((_s, req) => {
            req.once('data', () => req.socket.destroy());
          }).callMultipart('sendDocument', { chat_id: 1 }, [
            { field: 'document', filename: 'a', stream: generatedStream(8 * 1024 * 1024).stream },
          ]),
        ),
      'reset in the middle of an answer': () =>
        caught(() => serve(resetMidAnswer).call('getUpdates')),
      'reset in the middle of a streamed body': () =>
        caught(async () => readBody((await serve(resetMidAnswer).downloadFile('a/b')).body)),
      'timeout of a call': () =>
        caught(() => serve(neverAnswer).call('getMe', undefined, { timeoutMs: 100 })),
      'timeout of a forward': () =>
        caught(() =>
          serve(neverAnswer).forward('getMe', { httpMethod: 'GET' }, { timeoutMs: 100 }),
        ),
      'stalled streamed body': () =>
        caught(async () =>
          readBody((await serve(stallAfterHeaders).downloadFile('a/b', { timeoutMs: 100 })).body),
        ),
      'signal aborted before the call': () =>
        caught(() => serve(neverAnswer).call('getMe', undefined, { signal: AbortSignal.abort() })),
      'signal aborted during the call': () =>
        caught(() =>
          serve(neverAnswer).call('getMe', undefined, { signal: AbortSignal.timeout(50) }),
        ),
      'signal aborted during a streamed body': async () => {
        const controller = new AbortController();
        const response = await serve(stallAfterHeaders).downloadFile('a/b', {
          signal: controller.signal,
        });
        setTimeout(() => controller.abort(), 30);
        return caught(() => readBody(response.body));
      },
      'forwarded body stream failing with the token in its message': () =>
        caught(() =>
          serve(async (_s, req, res) => {
            await readBody(req).catch(() => undefined);
            res.destroy();
          }).forward('sendDocument', { httpMethod: 'POST', body: failingStream() }),
        ),
      'multipart file stream failing with the token in its message': () =>
        caught(() =>
          serve(async (_s, req, res) => {
            await readBody(req).catch(() => undefined);
            res.destroy();
          }).callMultipart('sendDocument', { chat_id: 1 }, [
            { field: 'document', filename: TOKEN, stream: failingStream() },
          ]),
        ),
      'multipart knownLength mismatch': () =>
        caught(() =>
          serve(neverAnswer).callMultipart('sendDocument', {}, [
            { field: 'document', filename: 'a', stream: Readable.from(['abc']), knownLength: 9 },
          ]),
        ),
      'call on a closed client': async () => {
        const closed = serve(neverAnswer);
        await closed.close();
        return caught(() => closed.getMe());
      },
      'client destroyed during a call': async () => {
        const destroyed = serve(neverAnswer);
        const call = caught(() => destroyed.getMe());
        await sleep(20);
        await destroyed.destroy();
        return call;
      },
      'method name holding the token': () => caught(() => client().call(TOKEN)),
      'forward to a method holding the token': () =>
        caught(() => client().forward(`bot${TOKEN}`, { httpMethod: 'GET' })),
      'file path holding the token': () => caught(() => client().downloadFile(`../${TOKEN}`)),
      'query holding the token': () =>
        caught(() => client().forward('getMe', { httpMethod: 'GET', query: `t=${TOKEN} x` })),
      'bad timeout': () => caught(() => client().getMe({ timeoutMs: -1 })),
      'params that are not JSON': () => caught(() => client().call('sendMessage', { n: 1n })),
      'apiBase holding the token': () =>
        caught(
          () => new TelegramClient({ apiBase: `http://x/?t=${TOKEN}`, token: testSecret(TOKEN) }),
        ),
      'token that cannot go in a path': () =>
        caught(() => new TelegramClient({ apiBase: tg.url, token: testSecret(`${TOKEN}/../x`) })),
      'registry given an unusable token': () =>
        caught(async () => {
          const registry = new TelegramClients({
            telegram: { apiBase: tg.url },
            bots: [{ id: 'bad', token: testSecret(`${TOKEN} `), numericId: '' }],
          } as unknown as RelaygramConfig);
          await registry.closeAll();
        }),
    };

    const failures: string[] = [];
    for (const [name, scenario] of Object.entries(scenarios)) {
      const error = await scenario();
      if (!OUR_ERRORS.some((type) => error instanceof type)) {
        failures.push(`${name}: not one of our errors: ${inspect(error)}`);
      } else if ((error as Error).cause !== undefined) {
        failures.push(`${name}: carries a cause`);
      }
      if (leaks(error)) failures.push(`${name}: leaks the token: ${inspect(error)}`);
    }

    expect(failures).toEqual([]);
    expect(events.length).toBeGreaterThan(15);
    expect(events.filter((e) => leaks(e))).toEqual([]);
    const failedCodes = events.filter((e) => !e.ok).map((e) => e.errorCode);
    expect(new Set(failedCodes)).toEqual(new Set([400, 0, -1, -2]));
  });

  it('passes none of Telegram headers that could carry the path back from forward', async () => {
    const response = await serve(redirectWithPath).forward('getMe', { httpMethod: 'GET' });
    await readBody(response.body);

    expect(response.statusCode).toBe(302);
    expect(response.headers).toEqual({ 'content-type': 'text/html' });
  });
});
