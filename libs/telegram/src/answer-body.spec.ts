import { PassThrough } from 'node:stream';
import { readWhole } from './answer-body';

describe('readWhole', () => {
  it('reads a body in chunks, whole', async () => {
    const stream = new PassThrough();
    const read = readWhole(stream, 10);
    stream.write('abc');
    stream.end('def');
    expect((await read)?.toString()).toBe('abcdef');
  });

  it('stops past the limit and drains the rest without destroying the stream', async () => {
    const stream = new PassThrough();
    const read = readWhole(stream, 4, 'drain');
    stream.write('abcdef');
    expect(await read).toBeUndefined();
    expect(stream.destroyed).toBe(false);
  });

  it('stops past the limit and destroys the stream by default', async () => {
    const stream = new PassThrough();
    const read = readWhole(stream, 4);
    stream.write('abcdef');
    expect(await read).toBeUndefined();
    expect(stream.destroyed).toBe(true);
  });

  it('answers an empty body for a stream already ended', async () => {
    const stream = new PassThrough();
    stream.end();
    stream.resume();
    await new Promise((resolve) => stream.once('end', resolve));
    expect((await readWhole(stream, 10))?.length).toBe(0);
  });

  it('fails when the stream closes before its end', async () => {
    const stream = new PassThrough();
    const read = readWhole(stream, 10);
    stream.write('abc');
    stream.destroy();
    await expect(read).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
