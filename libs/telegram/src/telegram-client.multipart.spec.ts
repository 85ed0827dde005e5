import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { digestBody } from '../test/fake-telegram.server';
import { generatedStream } from '../test/generated-stream';
import { testSecret } from '../test/test-secret';
import { TelegramClient } from './telegram-client';
import { TelegramNetworkError } from './telegram.errors';

const TOKEN = '7123456789:AAHk3Jd9-xY_q8Lm2NvP4RsT6uWz0aBcDeF';
const MiB = 1024 * 1024;

interface ReceivedPart {
  field: string;
  value?: string;
  filename?: string;
  mimetype?: string;
  size?: number;
  sha256?: string;
}

interface Received {
  method: string;
  headers: FastifyRequest['headers'];
  parts: ReceivedPart[];
}

/** Telegram as far as multipart goes: parts are hashed as they stream, never kept. */
async function startMultipartTelegram(
  onFileBytes: (received: number) => void = () => undefined,
): Promise<{ app: FastifyInstance; url: string; received: Received[] }> {
  const received: Received[] = [];
  const app = Fastify();
  await app.register(multipart, { limits: { fileSize: 100 * MiB, files: 10, fields: 50 } });
  app.post('/*', async (request, reply) => {
    const entry: Received = {
      method: request.url.split('/').pop() ?? '',
      headers: request.headers,
      parts: [],
    };
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const digest = await digestBody(part.file, onFileBytes);
        entry.parts.push({
          field: part.fieldname,
          filename: part.filename,
          mimetype: part.mimetype,
          ...digest,
        });
      } else {
        entry.parts.push({ field: part.fieldname, value: String(part.value) });
      }
    }
    received.push(entry);
    return reply.send({ ok: true, result: { message_id: 77 } });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, received };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function liveBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('TelegramClient.callMultipart', () => {
  let server: Awaited<ReturnType<typeof startMultipartTelegram>> | undefined;
  let client: TelegramClient | undefined;

  afterEach(async () => {
    await client?.destroy();
    await server?.app.close();
    client = undefined;
    server = undefined;
  });

  it('sends fields and files that arrive as Telegram would read them', async () => {
    server = await startMultipartTelegram();
    client = new TelegramClient({ apiBase: server.url, token: testSecret(TOKEN) });
    const photo = Buffer.from('not really a jpeg, but bytes all the same');
    const markup = { inline_keyboard: [[{ text: 'ok', callback_data: 'x' }]] };

    const result = await client.callMultipart(
      'sendPhoto',
      { chat_id: -100123, caption: 'ünïcode "quoted"', has_spoiler: true, reply_markup: markup },
      [
        {
          field: 'photo',
          filename: 'my "cat".jpg',
          contentType: 'image/jpeg',
          stream: Readable.from([photo.subarray(0, 7), photo.subarray(7)]),
          knownLength: photo.length,
        },
      ],
    );

    expect(result).toEqual({ message_id: 77 });
    const [request] = server.received;
    expect(request.method).toBe('sendPhoto');
    expect(request.headers['content-length']).toBeDefined();
    expect(request.headers['transfer-encoding']).toBeUndefined();
    expect(request.parts).toEqual([
      { field: 'chat_id', value: '-100123' },
      { field: 'caption', value: 'ünïcode "quoted"' },
      { field: 'has_spoiler', value: 'true' },
      { field: 'reply_markup', value: JSON.stringify(markup) },
      {
        field: 'photo',
        filename: 'my %22cat%22.jpg',
        mimetype: 'image/jpeg',
        size: photo.length,
        sha256: sha256(photo),
      },
    ]);
  });

  it('streams a large lazily generated file without holding it in memory', async () => {
    const size = 20 * MiB;
    const gc = exposeGc();
    const file = generatedStream(size);
    let maxInFlight = 0;
    let growthMidUpload: number | undefined;
    gc();
    const baseline = liveBytes();
    server = await startMultipartTelegram((received) => {
      maxInFlight = Math.max(maxInFlight, file.produced() - received);
      if (growthMidUpload === undefined && received >= size / 2) {
        gc();
        growthMidUpload = liveBytes() - baseline;
      }
    });
    client = new TelegramClient({ apiBase: server.url, token: testSecret(TOKEN) });

    await client.callMultipart('sendDocument', { chat_id: 1 }, [
      { field: 'document', filename: 'big.bin', stream: file.stream },
    ]);

    const part = server.received[0].parts[1];
    expect(part).toMatchObject({ field: 'document', size, sha256: file.sha256() });
    expect(server.received[0].headers['transfer-encoding']).toBe('chunked');
    // Pulled as the upload drained: only socket and parser buffers (a few MiB on
    // loopback) ever sat between the generator and the server, never the file.
    expect(maxInFlight).toBeLessThan(size / 2);
    expect(growthMidUpload).toBeDefined();
    expect(growthMidUpload).toBeLessThan(size / 4);
  });

  it('reports a file stream that fails as a request body failure', async () => {
    server = await startMultipartTelegram();
    client = new TelegramClient({ apiBase: server.url, token: testSecret(TOKEN) });
    const broken = new Readable({ read() {} });
    broken.push(Buffer.alloc(4096));
    setImmediate(() => broken.destroy(Object.assign(new Error('disk'), { code: 'EIO' })));

    const call = client.callMultipart('sendDocument', { chat_id: 1 }, [
      { field: 'document', filename: 'a.bin', stream: broken },
    ]);

    await expect(call).rejects.toBeInstanceOf(TelegramNetworkError);
    await expect(call).rejects.toMatchObject({
      code: 'EREQUESTBODY',
      reason: 'request body failed: file field "document" stream errored (EIO)',
    });
  });

  it('enforces knownLength', async () => {
    server = await startMultipartTelegram();
    client = new TelegramClient({ apiBase: server.url, token: testSecret(TOKEN) });

    const short = client.callMultipart('sendDocument', {}, [
      {
        field: 'document',
        filename: 'a',
        stream: Readable.from([Buffer.alloc(10)]),
        knownLength: 12,
      },
    ]);
    const long = client.callMultipart('sendDocument', {}, [
      {
        field: 'document',
        filename: 'a',
        stream: Readable.from([Buffer.alloc(20)]),
        knownLength: 12,
      },
    ]);

    await expect(short).rejects.toMatchObject({
      code: 'ELENGTH',
      reason: 'request body failed: file field "document" has 10 bytes, not its knownLength 12',
    });
    await expect(long).rejects.toMatchObject({
      code: 'ELENGTH',
      reason: 'request body failed: file field "document" is longer than its knownLength 12',
    });
    expect(server.received).toHaveLength(0);
  });
});
