import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { request } from 'undici';
import { pngHead } from '../png-head';
import { callApi, resultOf } from '../test/bot-api-client';
import { emulatorPerSpec } from '../test/shared-emulator';
import type { BotIdentity, PhotoSize, TelegramDocument, TelegramMessage } from './emulator.types';
import { FileStore } from './file-store';
import { TelegramEmulator } from './telegram-emulator';

interface TelegramFile {
  file_id: string;
  file_unique_id: string;
  file_size?: number;
  file_path?: string;
}

/** The head is enough for the PNG's size; the rest can be anything. */
const png = (width: number, height: number, extra = 100): Buffer =>
  Buffer.concat([pngHead(width, height), randomBytes(extra)]);

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('files', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;

  const api = <T>(method: string, params: Record<string, unknown> = {}) =>
    resultOf<T>(emu.apiRoot, bot.token, method, params);
  const download = async (filePath: string, token = bot.token) => {
    const response = await request(`${emu.apiRoot}/file/bot${token}/${filePath}`);
    return { status: response.statusCode, bytes: Buffer.from(await response.body.arrayBuffer()) };
  };

  emulatorPerSpec((started, fresh) => {
    emu = started;
    bot = fresh;
  });

  it('uploads a photo, describes it and serves it back through getFile', async () => {
    const bytes = png(640, 480);
    const message = await resultOf<TelegramMessage>(
      emu.apiRoot,
      bot.token,
      'sendPhoto',
      {
        chat_id: 31,
        caption: 'a cat',
        reply_markup: { inline_keyboard: [[{ text: 'Like', callback_data: 'l' }]] },
      },
      { files: { photo: { filename: 'cat.png', bytes, contentType: 'image/png' } } },
    );
    const [photo] = message.photo as PhotoSize[];
    expect(photo).toEqual({
      file_id: expect.stringMatching(/^AgAC[\w-]{40,}$/),
      file_unique_id: expect.stringMatching(/^AQAD/),
      file_size: bytes.length,
      width: 640,
      height: 480,
    });
    expect(message.caption).toBe('a cat');
    expect(message.reply_markup).toBeDefined();

    const [call] = emu.sent(bot.id, { method: 'sendPhoto' });
    expect(call?.params['photo']).toEqual({
      filename: 'cat.png',
      size: bytes.length,
      sha256: sha256(bytes),
      mimeType: 'image/png',
    });

    const file = await api<TelegramFile>('getFile', { file_id: photo?.file_id });
    expect(file).toEqual({
      file_id: photo?.file_id,
      file_unique_id: photo?.file_unique_id,
      file_size: bytes.length,
      file_path: expect.stringMatching(/^photos\/file_\d+\.jpg$/),
    });
    const served = await download(file.file_path as string);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(bytes)).toBe(true);
  });

  it('streams a document of several megabytes intact, in whatever part order', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const message = await resultOf<TelegramMessage>(
      emu.apiRoot,
      bot.token,
      'sendDocument',
      { chat_id: 32, caption: 'report' },
      { files: { document: { filename: 'report.PDF', bytes, contentType: 'application/pdf' } } },
    );
    const document = message.document as TelegramDocument;
    expect(document).toEqual({
      file_id: expect.stringMatching(/^BQAC/),
      file_unique_id: expect.any(String),
      file_name: 'report.PDF',
      mime_type: 'application/pdf',
      file_size: bytes.length,
    });
    expect(emu.sent(bot.id)[0]?.params['document']).toEqual(
      expect.objectContaining({ sha256: sha256(bytes), size: bytes.length }),
    );
    const file = await api<TelegramFile>('getFile', { file_id: document.file_id });
    expect(file.file_path).toMatch(/^documents\/file_\d+\.pdf$/);
    const served = await download(file.file_path as string);
    expect(sha256(served.bytes)).toBe(sha256(bytes));
  });

  it('accepts a file part named by attach://', async () => {
    const bytes = Buffer.from('attached bytes');
    const message = await resultOf<TelegramMessage>(
      emu.apiRoot,
      bot.token,
      'sendDocument',
      { chat_id: 1, document: 'attach://blob' },
      { files: { blob: { filename: 'notes.txt', bytes, contentType: 'text/plain' } } },
    );
    expect(message.document?.file_size).toBe(bytes.length);
    expect(message.document?.file_name).toBe('notes.txt');
  });

  it('re-sends a file by file_id and refuses a file_id of another kind', async () => {
    const first = await resultOf<TelegramMessage>(
      emu.apiRoot,
      bot.token,
      'sendDocument',
      { chat_id: 1 },
      {
        files: { document: { filename: 'a.bin', bytes: Buffer.from('abc') } },
      },
    );
    const fileId = first.document?.file_id as string;
    const again = await api<TelegramMessage>('sendDocument', { chat_id: 2, document: fileId });
    expect(again.document).toEqual(first.document);

    const asPhoto = await callApi(emu.apiRoot, bot.token, 'sendPhoto', {
      chat_id: 2,
      photo: fileId,
    });
    expect(asPhoto.body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: type of file mismatch',
    });
    const unknown = await callApi(emu.apiRoot, bot.token, 'sendPhoto', {
      chat_id: 2,
      photo: 'AgACnope',
    });
    expect(unknown.body.description).toBe('Bad Request: wrong file identifier/HTTP URL specified');
  });

  it('takes photos and documents by URL without fetching them', async () => {
    const message = await api<TelegramMessage>('sendPhoto', {
      chat_id: 4,
      photo: 'https://example.invalid/cat.jpg',
    });
    expect(message.photo?.[0]).toEqual(
      expect.objectContaining({ file_id: expect.any(String), width: expect.any(Number) }),
    );
    expect(emu.sent(bot.id)[0]?.params['photo']).toBe('https://example.invalid/cat.jpg');
    const file = await api<TelegramFile>('getFile', { file_id: message.photo?.[0]?.file_id });
    expect((await download(file.file_path as string)).status).toBe(404);
  });

  it('refuses a send without a file and getFile with an unknown file_id', async () => {
    const noPhoto = await callApi(emu.apiRoot, bot.token, 'sendPhoto', { chat_id: 4 });
    expect(noPhoto.body.description).toBe('Bad Request: there is no photo in the request');
    const noDocument = await callApi(emu.apiRoot, bot.token, 'sendDocument', { chat_id: 4 });
    expect(noDocument.body.description).toBe('Bad Request: there is no document in the request');
    const unknown = await callApi(emu.apiRoot, bot.token, 'getFile', {
      file_id: 'BQACAgIAAxkunknown',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: invalid file_id',
    });
  });

  it('serves files only to their bot and only under their path', async () => {
    const message = await resultOf<TelegramMessage>(
      emu.apiRoot,
      bot.token,
      'sendDocument',
      { chat_id: 1 },
      {
        files: { document: { filename: 'x.txt', bytes: Buffer.from('x') } },
      },
    );
    const file = await api<TelegramFile>('getFile', { file_id: message.document?.file_id });
    const other = emu.addBot();
    const stranger = await callApi(emu.apiRoot, other.token, 'getFile', {
      file_id: message.document?.file_id,
    });
    expect(stranger.body.description).toBe('Bad Request: invalid file_id');
    expect((await download(file.file_path as string, other.token)).status).toBe(404);
    expect((await download(file.file_path as string, '1:AAnope')).status).toBe(401);
    expect((await download('documents/file_999.txt')).status).toBe(404);
  });

  it("applies Telegram's 10 MB photo limit by default", async () => {
    const answer = await callApi(
      emu.apiRoot,
      bot.token,
      'sendPhoto',
      { chat_id: 1 },
      {
        files: { photo: { filename: 'huge.png', bytes: png(10, 10, 10 * 1024 * 1024) } },
      },
    );
    expect(answer.status).toBe(413);
  });

  describe('size limits', () => {
    let small: TelegramEmulator;
    let smallBot: BotIdentity;
    beforeAll(async () => {
      small = await TelegramEmulator.start({
        limits: { photoBytes: 1024, documentBytes: 4096, downloadBytes: 2048 },
      });
      smallBot = small.addBot();
    });
    afterAll(() => small.stop());

    it('answers 413 for a photo or document over the limit, and records it', async () => {
      const photo = await callApi(
        small.apiRoot,
        smallBot.token,
        'sendPhoto',
        { chat_id: 1 },
        {
          files: { photo: { filename: 'big.png', bytes: png(10, 10, 2000) } },
        },
      );
      expect(photo.status).toBe(413);
      expect(photo.body).toEqual({
        ok: false,
        error_code: 413,
        description: 'Request Entity Too Large',
      });
      const document = await callApi(
        small.apiRoot,
        smallBot.token,
        'sendDocument',
        { chat_id: 1 },
        {
          files: { document: { filename: 'big.bin', bytes: randomBytes(5000) } },
        },
      );
      expect(document.status).toBe(413);
      expect(small.sent(smallBot.id).map((c) => c.status)).toEqual([413, 413]);
    });

    it('accepts a document under the upload limit but refuses getFile over the download limit', async () => {
      const message = await resultOf<TelegramMessage>(
        small.apiRoot,
        smallBot.token,
        'sendDocument',
        { chat_id: 1 },
        {
          files: { document: { filename: 'mid.bin', bytes: randomBytes(3000) } },
        },
      );
      const file = await callApi(small.apiRoot, smallBot.token, 'getFile', {
        file_id: message.document?.file_id,
      });
      expect(file.body.description).toBe('Bad Request: file is too big');
    });
  });
});

describe('FileStore', () => {
  it('keeps uploads in its own temporary directory and removes it on clear', async () => {
    const store = new FileStore();
    const path = await store.tempPath();
    await writeFile(path, 'bytes');
    expect(existsSync(dirname(path))).toBe(true);
    await store.clear();
    expect(existsSync(dirname(path))).toBe(false);
  });
});
