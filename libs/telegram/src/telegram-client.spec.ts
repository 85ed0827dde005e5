import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { testSecret } from '../test/test-secret';
import {
  digestBody,
  readBody,
  sendJson,
  splitBotPath,
  startFakeTelegram,
  type FakeTelegram,
} from '../test/fake-telegram.server';
import { generatedStream } from '../test/generated-stream';
import { TelegramClient } from './telegram-client';
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

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('TelegramClient', () => {
  let tg: FakeTelegram;
  let client: TelegramClient;
  let events: TelegramCallEvent[];

  function newClient(apiBase = tg.url, timeoutMs?: number): TelegramClient {
    return new TelegramClient({
      apiBase,
      token: testSecret(TOKEN),
      botId: 'sol-prod',
      timeoutMs,
      onCall: (event) => events.push(event),
    });
  }

  beforeEach(async () => {
    events = [];
    tg = await startFakeTelegram();
    client = newClient();
  });

  afterEach(async () => {
    await client.destroy();
    await tg.close();
  });

  describe('call', () => {
    it('POSTs JSON params to /bot<token>/<method> and returns the result', async () => {
      let received: unknown;
      tg.handle(async (_seen, req, res) => {
        received = JSON.parse((await readBody(req)).toString());
        sendJson(res, 200, { ok: true, result: { message_id: 42 } });
      });

      const result = await client.call<{ message_id: number }>('sendMessage', {
        chat_id: 1,
        text: 'héllo & <b>',
        reply_markup: { inline_keyboard: [[{ text: 'a', callback_data: 'b' }]] },
      });

      expect(result).toEqual({ message_id: 42 });
      expect(received).toEqual({
        chat_id: 1,
        text: 'héllo & <b>',
        reply_markup: { inline_keyboard: [[{ text: 'a', callback_data: 'b' }]] },
      });
      const [seen] = tg.requests;
      expect(seen.httpMethod).toBe('POST');
      expect(seen.pathname).toBe(`/bot${TOKEN}/sendMessage`);
      expect(seen.headers['content-type']).toBe('application/json');
      expect(events).toEqual([
        { botId: 'sol-prod', method: 'sendMessage', ok: true, durationMs: expect.any(Number) },
      ]);
    });

    it('keeps the path prefix of an apiBase behind a path', async () => {
      await client.destroy();
      client = newClient(`${tg.url}/telegram/api/`);
      tg.handle((_seen, _req, res) => sendJson(res, 200, { ok: true, result: { id: 7 } }));

      await expect(client.getMe()).resolves.toEqual({ id: 7 });
      await client.downloadFile('photos/file_1.jpg').then(({ body }) => body.resume());

      expect(tg.requests.map((r) => r.pathname)).toEqual([
        `/telegram/api/bot${TOKEN}/getMe`,
        `/telegram/api/file/bot${TOKEN}/photos/file_1.jpg`,
      ]);
    });

    it.each([
      [400, 'Bad Request: chat not found', undefined, {}],
      [403, 'Forbidden: bot was blocked by the user', undefined, {}],
      [
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        undefined,
        {},
      ],
      [429, 'Too Many Requests: retry after 5', { retry_after: 5 }, { retryAfter: 5 }],
      [
        400,
        'Bad Request: group chat was upgraded to a supergroup chat',
        { migrate_to_chat_id: -1001234567890 },
        { migrateToChatId: -1001234567890 },
      ],
    ])(
      'maps an ok:false %i answer to a TelegramError',
      async (code, description, parameters, mapped) => {
        tg.handle((_seen, _req, res) =>
          sendJson(res, code, { ok: false, error_code: code, description, parameters }),
        );

        const error = await rejection(client.call('sendMessage', { chat_id: 1, text: 'x' }));

        expect(error).toBeInstanceOf(TelegramError);
        expect(error).toMatchObject({
          errorCode: code,
          description,
          httpStatus: code,
          method: 'sendMessage',
          message: `ETELEGRAM: ${code} ${description}`,
          ...mapped,
        });
        if (!('retryAfter' in mapped)) expect((error as TelegramError).retryAfter).toBeUndefined();
        if (!('migrateToChatId' in mapped)) {
          expect((error as TelegramError).migrateToChatId).toBeUndefined();
        }
        expect(events).toEqual([
          expect.objectContaining({ method: 'sendMessage', ok: false, errorCode: code }),
        ]);
      },
    );

    it('reports an HTML 502 from a proxy as a network error carrying the status', async () => {
      tg.handle((_seen, _req, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      });

      const error = await rejection(client.call('getMe'));

      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect(error).toMatchObject({ code: 'EBADANSWER', statusCode: 502, method: 'getMe' });
      expect((error as Error).message).toBe(
        `EFATAL: HTTP 502 answer from 127.0.0.1:${tg.port} is not Bot API JSON`,
      );
      expect(events[0]).toMatchObject({ ok: false, errorCode: 0 });
    });

    it('reports a refused connection with its code and host:port only', async () => {
      const port = await closedPort();
      await client.destroy();
      client = newClient(`http://127.0.0.1:${port}`);

      const error = await rejection(client.call('getMe'));

      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect(error).toMatchObject({
        code: 'ECONNREFUSED',
        reason: `ECONNREFUSED 127.0.0.1:${port} (connection refused)`,
      });
      expect(events[0]).toMatchObject({ method: 'getMe', ok: false, errorCode: 0 });
    });

    it('reports a connection reset in the middle of an answer', async () => {
      tg.handle((_seen, req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"ok":true,"result":[', () => req.socket.destroy());
      });

      const error = await rejection(client.call('getUpdates'));

      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect((error as TelegramNetworkError).code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET)$/);
    });

    it('times out when no answer comes within timeoutMs', async () => {
      tg.handle(() => undefined);

      const error = await rejection(client.call('getMe', undefined, { timeoutMs: 150 }));

      expect(error).toBeInstanceOf(TelegramTimeoutError);
      expect(error).toMatchObject({ method: 'getMe', timeoutMs: 150 });
      expect(events[0]).toMatchObject({ ok: false, errorCode: -1 });
    });

    it("times out on undici's own timers from 1 s on, with the same error", async () => {
      tg.handle(() => undefined);
      const started = Date.now();

      const error = await rejection(client.call('getMe', undefined, { timeoutMs: 1_000 }));

      expect(error).toBeInstanceOf(TelegramTimeoutError);
      expect(error).toMatchObject({ method: 'getMe', timeoutMs: 1_000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(events[0]).toMatchObject({ ok: false, errorCode: -1 });
    });

    it('gives getUpdates its long-poll timeout plus slack when the caller sets none', async () => {
      await client.destroy();
      client = newClient(tg.url, 100);
      tg.handle(async (_seen, _req, res) => {
        await sleep(400);
        sendJson(res, 200, { ok: true, result: [] });
      });

      await expect(client.call('getUpdates', { timeout: 1 })).resolves.toEqual([]);
      await expect(client.call('getMe')).rejects.toBeInstanceOf(TelegramTimeoutError);
    });

    it('stops when the caller aborts, and sends nothing once already aborted', async () => {
      const controller = new AbortController();
      tg.handle(() => controller.abort());

      const error = await rejection(client.call('getMe', undefined, { signal: controller.signal }));
      expect(error).toBeInstanceOf(TelegramAbortError);
      expect(tg.requests).toHaveLength(1);

      const again = await rejection(client.call('getMe', undefined, { signal: controller.signal }));
      expect(again).toBeInstanceOf(TelegramAbortError);
      expect(tg.requests).toHaveLength(1);
      expect(events.map((e) => e.errorCode)).toEqual([-2, -2]);
    });

    it('ignores an onCall hook that throws', async () => {
      await client.destroy();
      client = new TelegramClient({
        apiBase: tg.url,
        token: testSecret(TOKEN),
        onCall: () => {
          throw new Error('metrics down');
        },
      });
      tg.handle((_seen, _req, res) => sendJson(res, 200, { ok: true, result: true }));

      await expect(client.call('getMe')).resolves.toBe(true);
    });
  });

  describe('callUrlencoded', () => {
    it('sends a form Telegram parses back into the same parameters', async () => {
      let form: URLSearchParams | undefined;
      tg.handle(async (seen, req, res) => {
        expect(seen.headers['content-type']).toBe('application/x-www-form-urlencoded');
        form = new URLSearchParams((await readBody(req)).toString());
        sendJson(res, 200, { ok: true, result: true });
      });
      const markup = { inline_keyboard: [[{ text: 'a&b=c', callback_data: 'x y' }]] };

      await client.callUrlencoded('sendMessage', {
        chat_id: -100123,
        text: 'a&b=c ü +',
        disable_notification: true,
        reply_markup: markup,
        message_thread_id: undefined,
        reply_parameters: null,
      });

      expect(form && Object.fromEntries(form)).toEqual({
        chat_id: '-100123',
        text: 'a&b=c ü +',
        disable_notification: 'true',
        reply_markup: JSON.stringify(markup),
      });
    });
  });

  describe('method names', () => {
    it.each(['', 'send/Message', 'getMe?x=1', '..', 'sendMessage1', 'get Me', 'getMe\n', 'é'])(
      'refuses %j before any request',
      async (method) => {
        const body = Readable.from([Buffer.from('x')]);
        const calls = [
          client.call(method),
          client.callUrlencoded(method),
          client.callMultipart(method, {}, []),
          client.forward(method, { httpMethod: 'POST', body }),
        ];
        for (const call of calls) {
          await expect(call).rejects.toBeInstanceOf(TelegramRequestError);
        }
        expect(tg.requests).toHaveLength(0);
        expect(events).toHaveLength(0);
      },
    );
  });

  describe('downloadFile', () => {
    it('streams the file bytes and Telegram headers', async () => {
      const file = randomBytes(3 * 1024 * 1024 + 17);
      tg.handle((_seen, _req, res) => {
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': file.length });
        res.end(file);
      });

      const response = await client.downloadFile('photos/file 1#2.jpg');
      const digest = await digestBody(response.body);

      expect(response.statusCode).toBe(200);
      expect(response.headers).toEqual({
        'content-type': 'image/jpeg',
        'content-length': String(file.length),
      });
      expect(digest).toEqual({
        size: file.length,
        sha256: createHash('sha256').update(file).digest('hex'),
      });
      expect(splitBotPath(tg.requests[0].pathname).rest).toBe('photos/file%201%232.jpg');
      expect(events[0]).toMatchObject({ method: 'downloadFile', ok: true });
    });

    it('passes a 404 through', async () => {
      const response = await client.downloadFile('documents/gone.pdf');
      const body = await readBody(response.body);

      expect(response.statusCode).toBe(404);
      expect(JSON.parse(body.toString())).toEqual({
        ok: false,
        error_code: 404,
        description: 'Not Found',
      });
      expect(events[0]).toMatchObject({ method: 'downloadFile', ok: false, errorCode: 404 });
    });

    it.each([
      '',
      '/etc/passwd',
      '../secret',
      'photos/../../x',
      'a\\b',
      'a\u0000b',
      'a\nb',
      'a//b',
      './a',
    ])('refuses the path %j', async (path) => {
      await expect(client.downloadFile(path)).rejects.toBeInstanceOf(TelegramRequestError);
      expect(tg.requests).toHaveLength(0);
    });
  });

  describe('forward', () => {
    it('passes a JSON body through and Telegram status and bytes back unchanged', async () => {
      const sent = Buffer.from('{ "chat_id" : 1,\n "text":"hi" }');
      const answer = Buffer.from('{"ok":false,"error_code":400,"description":"Bad Request: x"}');
      let arrived: Buffer | undefined;
      tg.handle(async (_seen, req, res) => {
        arrived = await readBody(req);
        res.writeHead(400, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      });

      const response = await client.forward('sendMessage', {
        httpMethod: 'POST',
        contentType: 'application/json; charset=utf-8',
        body: Readable.from([sent.subarray(0, 5), sent.subarray(5)]),
      });

      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/json');
      expect(await readBody(response.body)).toEqual(answer);
      expect(arrived).toEqual(sent);
      expect(tg.requests[0].headers['content-type']).toBe('application/json; charset=utf-8');
      expect(events[0]).toMatchObject({ method: 'sendMessage', ok: false, errorCode: 400 });
    });

    it('reads a small answer whole when asked to, and times out as a stream does', async () => {
      tg.handle((_seen, _req, res) => sendJson(res, 200, { ok: true, result: { id: 1 } }));

      const small = await client.forward('getChat', { httpMethod: 'GET' }, { bufferUpTo: 1024 });
      const large = await client.forward('getChat', { httpMethod: 'GET' }, { bufferUpTo: 8 });

      expect(Buffer.isBuffer(small.body)).toBe(true);
      expect(JSON.parse(small.body.toString())).toEqual({ ok: true, result: { id: 1 } });
      expect(Buffer.isBuffer(large.body)).toBe(false);
      expect(JSON.parse((await readBody(large.body as Readable)).toString())).toEqual({
        ok: true,
        result: { id: 1 },
      });

      tg.handle(() => undefined);
      const error = await rejection(
        client.forward('getChat', { httpMethod: 'GET' }, { timeoutMs: 1_000, bufferUpTo: 1024 }),
      );
      expect(error).toBeInstanceOf(TelegramTimeoutError);
      expect(error).toMatchObject({ method: 'getChat', timeoutMs: 1_000 });
    });

    it('passes a GET with its query string', async () => {
      tg.handle((_seen, _req, res) => sendJson(res, 200, { ok: true, result: { id: 1 } }));

      const response = await client.forward('getChat', {
        httpMethod: 'GET',
        query: '?chat_id=%40channel&x=a%20b',
      });
      response.body.resume();

      expect(response.statusCode).toBe(200);
      expect(tg.requests[0]).toMatchObject({
        httpMethod: 'GET',
        pathname: `/bot${TOKEN}/getChat`,
        query: 'chat_id=%40channel&x=a%20b',
      });
    });

    it('refuses a query that is not URL-encoded and a GET with a body', async () => {
      await expect(
        client.forward('getChat', { httpMethod: 'GET', query: 'chat_id=1 HTTP/1.1' }),
      ).rejects.toBeInstanceOf(TelegramRequestError);
      await expect(
        client.forward('getChat', { httpMethod: 'GET', body: Buffer.from('x') }),
      ).rejects.toBeInstanceOf(TelegramRequestError);
      expect(tg.requests).toHaveLength(0);
    });

    it('streams a multipart upload through byte for byte', async () => {
      const boundary = 'xYzBoundary42';
      const file = generatedStream(5 * 1024 * 1024);
      async function* multipart(): AsyncGenerator<Buffer> {
        yield Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n1\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="a.bin"\r\n` +
            `Content-Type: application/octet-stream\r\n\r\n`,
        );
        for await (const chunk of file.stream) yield chunk as Buffer;
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      }
      const sentHash = createHash('sha256');
      const body = Readable.from(multipart()).map((chunk: Buffer) => {
        sentHash.update(chunk);
        return chunk;
      });
      let arrived: { size: number; sha256: string } | undefined;
      tg.handle(async (_seen, req, res) => {
        arrived = await digestBody(req);
        sendJson(res, 200, { ok: true, result: { message_id: 1 } });
      });

      const response = await client.forward('sendDocument', {
        httpMethod: 'POST',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body,
      });
      const answer = JSON.parse((await readBody(response.body)).toString());

      expect(answer).toEqual({ ok: true, result: { message_id: 1 } });
      expect(tg.requests[0].headers['content-type']).toBe(
        `multipart/form-data; boundary=${boundary}`,
      );
      expect(tg.requests[0].headers['transfer-encoding']).toBe('chunked');
      expect(arrived?.sha256).toBe(sentHash.digest('hex'));
    });

    it('reports a failing request body stream as a body failure', async () => {
      tg.handle(async (_seen, req, res) => {
        await readBody(req).catch(() => undefined);
        res.destroy();
      });
      const body = new Readable({ read() {} });
      body.push(Buffer.alloc(1024));
      setImmediate(() =>
        body.destroy(Object.assign(new Error('client went away'), { code: 'ECONNRESET' })),
      );

      const error = await rejection(
        client.forward('sendDocument', { httpMethod: 'POST', contentType: 'text/plain', body }),
      );

      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect(error).toMatchObject({
        code: 'EREQUESTBODY',
        reason: 'request body failed: body stream errored (ECONNRESET)',
      });
    });

    it('turns a reset in the middle of the answer body into our own error', async () => {
      tg.handle((_seen, req, res) => {
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': '100000',
        });
        res.write(Buffer.alloc(1000), () => setTimeout(() => req.socket.destroy(), 20));
      });

      const response = await client.downloadFile('documents/a.bin');
      const error = await rejection(readBody(response.body));

      expect(error).toBeInstanceOf(TelegramNetworkError);
    });

    it('times out a stalled answer body', async () => {
      tg.handle((_seen, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100' });
        res.write(Buffer.alloc(10));
      });

      const response = await client.downloadFile('documents/a.bin', { timeoutMs: 150 });
      const error = await rejection(readBody(response.body));

      expect(error).toBeInstanceOf(TelegramTimeoutError);
    });
  });

  describe('close and destroy', () => {
    it('close() lets an in-flight call finish, then refuses new calls', async () => {
      tg.handle(async (_seen, _req, res) => {
        await sleep(100);
        sendJson(res, 200, { ok: true, result: 'done' });
      });

      const inFlight = client.call('getMe');
      await sleep(20);
      const closed = client.close();

      await expect(inFlight).resolves.toBe('done');
      await closed;
      expect(client.closed).toBe(true);
      const error = await rejection(client.call('getMe'));
      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect((error as TelegramNetworkError).code).toBe('ECLOSED');
      expect(tg.requests).toHaveLength(1);
    });

    it('close(graceMs) cuts off a call still running after graceMs', async () => {
      tg.handle(() => undefined);

      const inFlight = client.call('getMe');
      await sleep(20);
      const cut = await client.close(100);

      expect(cut).toBe(true);
      const error = await rejection(inFlight);
      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect((error as TelegramNetworkError).code).toBe('UND_ERR_DESTROYED');
    });

    it('close(graceMs) waits for a call that ends within graceMs', async () => {
      tg.handle(async (_seen, _req, res) => {
        await sleep(50);
        sendJson(res, 200, { ok: true, result: 'done' });
      });

      const inFlight = client.call('getMe');
      await sleep(10);

      await expect(client.close(5_000)).resolves.toBe(false);
      await expect(inFlight).resolves.toBe('done');
    });

    it('destroy() fails in-flight calls at once', async () => {
      tg.handle(() => undefined);

      const inFlight = client.call('getMe');
      await sleep(20);
      await client.destroy();

      const error = await rejection(inFlight);
      expect(error).toBeInstanceOf(TelegramNetworkError);
      expect((error as TelegramNetworkError).code).toBe('UND_ERR_DESTROYED');
    });
  });

  describe('construction', () => {
    it.each([
      ['ftp://api.example', TOKEN],
      ['not a url', TOKEN],
      ['https://user:pass@api.example', TOKEN],
      ['https://api.example/?a=1', TOKEN],
      [`http://127.0.0.1:1`, `${TOKEN}/x`],
      [`http://127.0.0.1:1`, ''],
    ])('refuses apiBase %j with token shape %#', (apiBase, token) => {
      expect(() => new TelegramClient({ apiBase, token: testSecret(token) })).toThrow(
        TelegramRequestError,
      );
    });

    it('does not show the token when inspected or serialized', () => {
      expect(JSON.stringify(client)).not.toContain(TOKEN.split(':')[1]);
      expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(TOKEN.split(':')[1]);
    });
  });
});
