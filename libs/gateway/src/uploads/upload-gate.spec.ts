import { PassThrough, Readable } from 'node:stream';
import { UploadGate, UploadTooLargeError } from './upload-gate';

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('UploadGate', () => {
  it('relays the source unchanged and ends with it', async () => {
    const source = Readable.from([Buffer.from('abc'), Buffer.from('def')]);
    const gate = new UploadGate(source, { limitBytes: 100 });
    expect((await collect(gate.stream)).toString()).toBe('abcdef');
    expect(await gate.sourceDone).toBe('ended');
    expect(gate.bytes).toBe(6);
  });

  it('fails the outgoing body past the limit and drains the rest of the source', async () => {
    const source = new PassThrough();
    const gate = new UploadGate(source, { limitBytes: 5 });
    const read = collect(gate.stream);
    source.write('abcd');
    source.write('efgh');
    await expect(read).rejects.toBeInstanceOf(UploadTooLargeError);
    expect(gate.tooLarge).toBe(true);
    source.end(Buffer.alloc(1024 * 1024));
    await new Promise((resolve) => source.once('end', resolve));
    expect(await gate.sourceDone).toBe('failed');
  });

  it('holds the end until released, and can refuse instead', async () => {
    const held = new UploadGate(Readable.from([Buffer.from('x')]), {
      limitBytes: 10,
      holdEnd: true,
    });
    const read = collect(held.stream);
    expect(await held.sourceDone).toBe('ended');
    held.release();
    expect((await read).toString()).toBe('x');

    const refused = new UploadGate(Readable.from([Buffer.from('x')]), {
      limitBytes: 10,
      holdEnd: true,
    });
    const failing = collect(refused.stream);
    await refused.sourceDone;
    refused.refuse(new Error('late part'));
    await expect(failing).rejects.toThrow('late part');
    expect(refused.refusal?.message).toBe('late part');
  });

  it('refuses before relaying a chunk that inspect rejects', async () => {
    const source = Readable.from([Buffer.from('ok '), Buffer.from('bad'), Buffer.from(' more')]);
    const relayed: string[] = [];
    const gate = new UploadGate(source, {
      limitBytes: 100,
      inspect: (chunk) => (chunk.toString() === 'bad' ? new Error('found bad') : undefined),
    });
    gate.stream.on('data', (chunk: Buffer) => relayed.push(chunk.toString()));
    await expect(new Promise((_, reject) => gate.stream.once('error', reject))).rejects.toThrow(
      'found bad',
    );
    expect(relayed.join('')).not.toContain('bad');
  });

  it('keeps a refusal after the consumer let go from becoming an uncaught error', async () => {
    const gate = new UploadGate(Readable.from([Buffer.from('x')]), { limitBytes: 10 });
    await collect(gate.stream);
    expect(() => gate.refuse(new Error('too late'))).not.toThrow();
  });
});
