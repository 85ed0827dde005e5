import { pngHead } from '@relaygram/testing';
import { FormData, request } from 'undici';
import { get, post, type JsonAnswer } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';
import { streamedMultipart } from './multipart-body';

const UNAUTHORIZED = { ok: false, error_code: 401, description: 'Unauthorized' };
const RESERVED = { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' };

describe('Bot API drop-in', () => {
  let h: GatewayHarness;
  let root: string;
  const callsOf = (method?: string) => h.emulator.calls(h.main.id, method ? { method } : {});
  const direct = (method: string, body: unknown) =>
    post(`${h.emulator.apiRoot}/bot${h.main.token}/${method}`, body);

  beforeAll(async () => {
    h = await startGatewayHarness({ gateway: { uploadLimitBytes: 1024 * 1024 } });
    root = `${h.url}/bot${h.dropInToken(h.main)}`;
  });
  afterAll(() => h.close());
  afterEach(() => h.emulator.clearFailures(h.main.id));

  describe('answers exactly as Telegram', () => {
    it('GET with query parameters', async () => {
      const me = await get(`${root}/getMe`);
      expect(me.status).toBe(200);
      expect(me.body).toEqual((await direct('getMe', {})).body);
      const sent = await get(`${root}/sendMessage?chat_id=5&text=by%20query`);
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ ok: true, result: { chat: { id: 5 }, text: 'by query' } });
    });

    it('POST with JSON, urlencoded and multipart bodies', async () => {
      const json = await post(`${root}/sendMessage`, { chat_id: 6, text: 'json' });
      expect(json.body).toMatchObject({ ok: true, result: { text: 'json' } });
      const form = await post(`${root}/sendMessage`, 'chat_id=6&text=form', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(form.body).toMatchObject({ ok: true, result: { text: 'form' } });
      const data = new FormData();
      data.set('chat_id', '6');
      data.set('caption', 'multipart');
      data.set(
        'photo',
        new Blob([pngHead(), Buffer.alloc(1000, 1)], { type: 'image/png' }),
        'p.png',
      );
      const res = await request(`${root}/sendPhoto`, { method: 'POST', body: data });
      const photo = (await res.body.json()) as Record<string, unknown>;
      expect(res.statusCode).toBe(200);
      expect(photo).toMatchObject({ ok: true, result: { caption: 'multipart' } });
      expect(callsOf('sendPhoto').at(-1)?.params.photo).toMatchObject({ size: 1024 });
    });

    it('passes Telegram errors through with their status and JSON, without retrying a 429', async () => {
      h.emulator.failBlockedByUser(h.main.id, 'sendMessage');
      const blocked = await post(`${root}/sendMessage`, { chat_id: 7, text: 'x' });
      expect(blocked.status).toBe(403);
      expect(blocked.text).toBe(
        '{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}',
      );
      const before = callsOf('sendMessage').length;
      h.emulator.failTooManyRequests(h.main.id, 1, 'sendMessage');
      const flood = await post(`${root}/sendMessage`, { chat_id: 7, text: 'x' });
      expect(flood.status).toBe(429);
      expect(flood.body).toEqual({
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 1',
        parameters: { retry_after: 1 },
      });
      expect(
        callsOf('sendMessage')
          .slice(before)
          .map((c) => c.status),
      ).toEqual([429]);
      const unknown = await post(`${root}/sendNothing`, {});
      expect(unknown.status).toBe(404);
    });

    it('serves files: /file/bot<id>:<token>/<file_path>', async () => {
      const bytes = Buffer.from('file through the gateway '.repeat(100));
      const data = new FormData();
      data.set('chat_id', '8');
      data.set('document', new Blob([bytes]), 'doc.txt');
      const sent = await request(`${root}/sendDocument`, { method: 'POST', body: data });
      const message = (await sent.body.json()) as { result: { document: { file_id: string } } };
      const file = await get<{ result: { file_path: string } }>(
        `${root}/getFile?file_id=${message.result.document.file_id}`,
      );
      expect(file.status).toBe(200);
      const download = await request(
        `${h.url}/file/bot${h.dropInToken(h.main)}/${file.body.result.file_path}`,
      );
      expect(download.statusCode).toBe(200);
      expect(Buffer.from(await download.body.arrayBuffer())).toEqual(bytes);
      const missing = await request(`${h.url}/file/bot${h.dropInToken(h.main)}/documents/nope`);
      expect(missing.statusCode).toBe(404);
      await missing.body.dump();
    });

    it('answers 502 Telegram-style when Telegram cannot be reached', async () => {
      h.emulator.fail(h.main.id, { method: 'sendMessage', drop: true });
      const res = await post(`${root}/sendMessage`, { chat_id: 9, text: 'x' });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ ok: false, error_code: 502 });
      expect(String(res.body.description)).toMatch(/^Bad Gateway: EFATAL: /);
    });
  });

  describe('auth and scope, Telegram-style', () => {
    it('answers 401 for a wrong client token, an unknown bot id and the real bot token', async () => {
      const paths = [
        `/bot${h.main.id}:wrong-token-0123456789/getMe`,
        `/bot${h.main.id}:${h.siteToken}x/getMe`,
        `/bot999:${h.siteToken}/getMe`,
        `/bot${h.main.token}/getMe`,
        `/file/bot${h.main.token}/documents/file_1.txt`,
      ];
      for (const path of paths) {
        const res = await get(`${h.url}${path}`);
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 401,
          body: UNAUTHORIZED,
        });
      }
      const malformed = await get(`${h.url}/botnotatoken/getMe`);
      expect(malformed.status).toBe(404);
    });

    it('answers 403 for a bot or method outside the client lists', async () => {
      const lonely = await get(`${h.url}/bot${h.dropInToken(h.lonely)}/getMe`);
      expect(lonely.status).toBe(403);
      expect(lonely.body).toMatchObject({ ok: false, error_code: 403 });
      expect(String(lonely.body.description)).toMatch(/^Forbidden: /);
      const narrow = `${h.url}/bot${h.dropInToken(h.main, h.narrowToken)}`;
      const photo = await post(`${narrow}/sendPhoto`, { chat_id: 1, photo: 'x' });
      expect(photo.status).toBe(403);
      expect(photo.body).toEqual({
        ok: false,
        error_code: 403,
        description: 'Forbidden: this client may not call sendPhoto',
      });
      const file = await get(`${h.url}/file/bot${h.dropInToken(h.main, h.narrowToken)}/x/y`);
      expect(file.status).toBe(403);
      expect((await post(`${narrow}/sendMessage`, { chat_id: 1, text: 'ok' })).status).toBe(200);
    });
  });

  describe('refusals that protect the update stream', () => {
    let before: number;
    beforeEach(() => {
      before = h.emulator.calls(h.main.id).length;
    });
    afterEach(() => {
      expect(h.emulator.calls(h.main.id).length).toBe(before);
    });

    it('refuses reserved methods in any case and any HTTP method', async () => {
      const answers: JsonAnswer[] = [
        await post(`${root}/DeleteWebhook`, {}),
        await post(`${root}/deleteWebhook`, { drop_pending_updates: true }),
        await get(`${root}/getupdates?timeout=0`),
        await get(`${root}/GETUPDATES`),
        await post(`${root}/setWebhook`, 'url=https://evil.example', {
          'content-type': 'application/x-www-form-urlencoded',
        }),
        await post(`${root}/logOut`, {}),
        await post(`${root}/close`, {}),
      ];
      for (const res of answers) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual(RESERVED);
      }
    });

    it('refuses a method parameter in the query, a JSON body and a form', async () => {
      const answers = [
        await get(`${root}/sendMessage?chat_id=1&text=x&method=getUpdates`),
        await get(`${root}/sendMessage?%6Dethod=getUpdates`),
        await post(`${root}/sendMessage`, { chat_id: 1, text: 'x', method: 'getUpdates' }),
        await post(`${root}/sendMessage`, '{"chat_id":1,"\\u006dethod":"close"}', {
          'content-type': 'application/json',
        }),
        await post(`${root}/sendMessage`, 'chat_id=1&Method=logOut', {
          'content-type': 'application/x-www-form-urlencoded',
        }),
        // Telegram reads a body as JSON when the header mentions application/json anywhere.
        await post(`${root}/sendMessage`, '{"method":"getUpdates"}', {
          'content-type': 'text/plain; charset=application/json',
        }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ ok: false, error_code: 400 });
        expect(String(res.body.description)).toMatch(/"method"/);
      }
    });

    it('refuses a method field in a multipart body, before or after the file', async () => {
      for (const placement of ['before', 'after'] as const) {
        const fields = {
          chat_id: '1',
          ...(placement === 'before' ? { method: 'getUpdates' } : {}),
        };
        const multipart = streamedMultipart(
          fields,
          {
            field: 'document',
            filename: 'a.bin',
            contentType: 'application/octet-stream',
            size: 200_000,
          },
          { after: placement === 'after' ? { method: 'close' } : {} },
        );
        const res = await request(`${root}/sendDocument`, {
          method: 'POST',
          headers: { 'content-type': multipart.contentType },
          body: multipart.body,
        });
        const body = (await res.body.json()) as Record<string, unknown>;
        expect({ placement, status: res.statusCode }).toEqual({ placement, status: 400 });
        expect(String(body.description)).toMatch(/"method"/);
      }
    });

    it('accepts a method parameter that repeats the path method (Telegraf uploads send one)', async () => {
      const multipart = streamedMultipart(
        { chat_id: '1', method: 'senddocument' },
        {
          field: 'document',
          filename: 'a.bin',
          contentType: 'application/octet-stream',
          size: 1000,
        },
      );
      const res = await request(`${root}/sendDocument`, {
        method: 'POST',
        headers: { 'content-type': multipart.contentType },
        body: multipart.body,
      });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      const json = await post(`${root}/sendMessage`, {
        chat_id: 1,
        text: 'x',
        method: 'sendMessage',
      });
      expect(json.status).toBe(200);
      before += 2;
    });

    it('refuses the test environment path and method names outside ^[A-Za-z]+$', async () => {
      const test = await post(`${root}/test/sendMessage`, { chat_id: 1, text: 'x' });
      expect(test.status).toBe(403);
      expect(String(test.body.description)).toMatch(/test environment/);
      for (const path of ['send_message', 'sendMessage2', 'a/b']) {
        const res = await post(`${root}/${path}`, {});
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ ok: false, error_code: 404, description: 'Not Found' });
      }
      const put = await request(`${root}/sendMessage`, { method: 'PUT', body: '{}' });
      expect(put.statusCode).toBe(404);
      await put.body.dump();
    });

    it('answers 413 past the size limits', async () => {
      const big = await post(`${root}/sendMessage`, { chat_id: 1, text: 'x'.repeat(1024 * 1024) });
      expect(big.status).toBe(413);
      expect(big.body).toEqual({
        ok: false,
        error_code: 413,
        description: 'Request Entity Too Large',
      });
      const multipart = streamedMultipart(
        { chat_id: '1' },
        {
          field: 'document',
          filename: 'a.bin',
          contentType: 'application/octet-stream',
          size: 3 * 1024 * 1024,
        },
      );
      const upload = await request(`${root}/sendDocument`, {
        method: 'POST',
        headers: { 'content-type': multipart.contentType },
        body: multipart.body,
      });
      expect(upload.statusCode).toBe(413);
      await upload.body.dump();
    });
  });
});
