import { Readable } from 'node:stream';
import type { BroadcastStore } from '@relaygram/queue';
import { receiveBroadcast, type UploadTarget } from './broadcast-upload';

/** A store that keeps the appended batches, or fails the `failAt`-th append with `error`. */
function fakeStore(failAt?: number, error = new Error('connect ECONNREFUSED')) {
  const batches: string[][] = [];
  const store = {
    async append(_bot: string, _id: string, upload: string, chatIds: readonly string[]) {
      if (upload !== 'upload-1') throw new Error('wrong upload');
      if (batches.length + 1 === failAt) throw error;
      batches.push([...chatIds]);
      return batches.flat().length;
    },
  };
  const target: UploadTarget = {
    store: store as unknown as BroadcastStore,
    bot: 'shop-bot',
    id: 'id-1',
    upload: 'upload-1',
    client: { name: 'site', bots: new Set(['shop-bot']) },
  };
  return { batches, target };
}

function body(count: number, tail = '],"method":"sendMessage","params":{"text":"x"}}'): string {
  return `{"chat_ids":[${Array.from({ length: count }, (_, i) => i + 1).join(',')}${tail}`;
}

/** The text in chunks of `size` bytes, as a socket would bring it. */
function chunked(text: string, size = 4096): Readable {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return Readable.from(chunks);
}

describe('receiveBroadcast', () => {
  it('appends the recipients in batches of BROADCAST_CHUNK, in order', async () => {
    const { batches, target } = fakeStore();
    const result = await receiveBroadcast(chunked(body(2_500)), target);
    expect(result).toEqual({
      ok: true,
      call: { method: 'sendMessage', params: { text: 'x' } },
      total: 2_500,
    });
    expect(batches.map((b) => b.length)).toEqual([1_000, 1_000, 500]);
    expect(batches.flat()).toEqual(Array.from({ length: 2_500 }, (_, i) => String(i + 1)));
  });

  it('reads the rest of a refused body, storing no more', async () => {
    const { batches, target } = fakeStore();
    const stream = chunked(body(1_500).replace('1200,', '"x",'), 512);
    const result = await receiveBroadcast(stream, target);
    expect(result).toMatchObject({
      ok: false,
      answer: {
        status: 400,
        body: { error: expect.stringMatching(/^chat_ids\[1199\] \(at byte/) },
      },
    });
    expect(batches.map((b) => b.length)).toEqual([1_000]);
    expect(stream.readableEnded).toBe(true);
  });

  it('stops reading past the limit: 413, or the refusal, closing the connection', async () => {
    const tooLarge = await receiveBroadcast(chunked(body(5_000)), fakeStore().target, 10_000);
    expect(tooLarge).toMatchObject({
      ok: false,
      answer: { status: 413, headers: { connection: 'close' } },
    });
    const refused = await receiveBroadcast(
      chunked(`{"method":"getMe",${body(5_000).slice(1)}`),
      fakeStore().target,
      10_000,
    );
    expect(refused).toMatchObject({
      ok: false,
      answer: { status: 400, headers: { connection: 'close' } },
    });
  });

  it('answers 503 when Redis fails, 409 when another request took the upload over', async () => {
    const down = fakeStore(2);
    const failed = await receiveBroadcast(chunked(body(3_000)), down.target);
    expect(failed).toMatchObject({
      ok: false,
      answer: { status: 503, headers: { 'retry-after': '1', connection: 'close' } },
      redisError: expect.any(Error),
    });
    const takenOver = fakeStore(
      1,
      new Error('ERR relaygram broadcast: its upload was started afresh by another request'),
    );
    expect(await receiveBroadcast(chunked(body(1_000)), takenOver.target)).toMatchObject({
      ok: false,
      answer: { status: 409 },
    });
  });

  it('refuses a body that breaks off', async () => {
    const stream = new Readable({ read() {} });
    stream.push(Buffer.from('{"chat_ids":[1,2'));
    setImmediate(() => stream.destroy(new Error('aborted')));
    expect(await receiveBroadcast(stream, fakeStore().target)).toMatchObject({
      ok: false,
      answer: { status: 400, body: { error: 'the body did not arrive whole' } },
    });
  });
});
