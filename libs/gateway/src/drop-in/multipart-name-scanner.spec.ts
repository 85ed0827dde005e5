import { MultipartNameScanner, MultipartScanError, partNames } from './multipart-name-scanner';

const BOUNDARY = '----relaygramTestBoundary7MA4YWxk';

function multipart(parts: { headers: string[]; body: string | Buffer }[], preamble = ''): Buffer {
  const chunks: Buffer[] = [Buffer.from(preamble)];
  for (const part of parts) {
    chunks.push(
      Buffer.from(`--${BOUNDARY}\r\n${part.headers.map((h) => `${h}\r\n`).join('')}\r\n`),
    );
    chunks.push(Buffer.isBuffer(part.body) ? part.body : Buffer.from(part.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\nepilogue --${BOUNDARY}\r\n`));
  return Buffer.concat(chunks);
}

function field(name: string, value: string) {
  return { headers: [`Content-Disposition: form-data; name="${name}"`], body: value };
}

function scanInChunks(body: Buffer, size: number, capture?: (name: string) => boolean) {
  const scanner = new MultipartNameScanner(BOUNDARY, capture);
  const found: ReturnType<MultipartNameScanner['push']> = [];
  for (let at = 0; at < body.length; at += size) {
    found.push(...scanner.push(body.subarray(at, at + size)));
  }
  return found;
}

function namesIn(body: Buffer, size: number): string[] {
  return scanInChunks(body, size).map((part) => part.name);
}

describe('MultipartNameScanner', () => {
  const body = multipart([
    field('chat_id', '42'),
    field('caption', `not a delimiter: --${BOUNDARY.slice(0, 10)} and name="method"`),
    {
      headers: [
        'Content-Disposition: form-data; name="photo"; filename="cat.png"',
        'Content-Type: image/png',
      ],
      body: Buffer.from(`\r\n--${BOUNDARY.slice(0, -1)}x name="method"\r\n\r\n`.repeat(50)),
    },
    field('empty', ''),
    field('reply_markup', '{"inline_keyboard":[]}'),
  ]);

  it('finds every part name, in order, whatever the chunking', () => {
    const expected = ['chat_id', 'caption', 'photo', 'empty', 'reply_markup'];
    for (let size = 1; size <= 64; size++) expect(namesIn(body, size)).toEqual(expected);
    expect(namesIn(body, body.length)).toEqual(expected);
  });

  it('reports a name with the chunk that completes its header, not before', () => {
    const withMethod = multipart([field('chat_id', '1'), field('method', 'getUpdates')]);
    const headerEnd = withMethod.indexOf('name="method"\r\n\r\n') + 'name="method"\r\n\r\n'.length;
    const scanner = new MultipartNameScanner(BOUNDARY);
    expect(scanner.push(withMethod.subarray(0, headerEnd - 1))).toEqual([{ name: 'chat_id' }]);
    expect(scanner.push(withMethod.subarray(headerEnd - 1))).toEqual([{ name: 'method' }]);
  });

  it('reads a first delimiter after a preamble, and nothing after the closing one', () => {
    const withPreamble = multipart([field('a', '1')], 'preamble\r\n');
    expect(namesIn(withPreamble, 3)).toEqual(['a']);
  });

  it('accepts transport padding after a delimiter and a part without headers', () => {
    const raw = Buffer.from(
      `--${BOUNDARY}  \t\r\nContent-Disposition: form-data; name=plain\r\n\r\nx\r\n` +
        `--${BOUNDARY}\r\n\r\nno headers\r\n--${BOUNDARY}--`,
    );
    expect(namesIn(raw, 5)).toEqual(['plain']);
  });

  it('captures the values it is asked for, at the end of their part, whatever the chunking', () => {
    const withValues = multipart([
      field('method', 'sendDocument'),
      field('chat_id', '1'),
      field('Method', 'getUpdates'),
      field('method', 'x'.repeat(2000)),
      field('method', ''),
    ]);
    const isMethod = (name: string) => name === 'method';
    for (const size of [1, 2, 7, 64, withValues.length]) {
      const captured = scanInChunks(withValues, size, isMethod).filter(
        (p) => p.value !== undefined,
      );
      expect(captured).toEqual([
        { name: 'method', value: 'sendDocument' },
        { name: 'method', value: 'getUpdates' },
        { name: 'method', value: null },
        { name: 'method', value: '' },
      ]);
    }
  });

  it('reports a captured value with the chunk that holds the delimiter after it', () => {
    const body = multipart([field('method', 'getUpdates')]);
    const valueEnd = body.indexOf('getUpdates') + 'getUpdates'.length;
    const scanner = new MultipartNameScanner(BOUNDARY, (name) => name === 'method');
    const early = scanner.push(body.subarray(0, valueEnd + 4));
    expect(early.filter((p) => p.value !== undefined)).toEqual([]);
    expect(scanner.push(body.subarray(valueEnd + 4))).toEqual([
      { name: 'method', value: 'getUpdates' },
    ]);
  });

  it('refuses a part header larger than 16 KB instead of holding it', () => {
    const scanner = new MultipartNameScanner(BOUNDARY);
    scanner.push(Buffer.from(`--${BOUNDARY}\r\nX-Padding: `));
    expect(() => {
      for (let i = 0; i < 40; i++) scanner.push(Buffer.alloc(1024, 'a'));
    }).toThrow(MultipartScanError);
  });
});

describe('partNames', () => {
  it.each([
    ['Content-Disposition: form-data; name="method"', ['method']],
    ['content-disposition: form-data; NAME=Method', ['method']],
    ['Content-Disposition: form-data; name="met\\hod"', ['method']],
    ["Content-Disposition: form-data; name*=utf-8''%6Dethod", ['method']],
    ['Content-Disposition: form-data;\r\n name="method"', ['method']],
    ['Content-Disposition: name="method"', ['method']],
    ['Content-Disposition: form-data; filename="method"', []],
    ['Content-Type: text/plain; name="method"', []],
    ['Content-Disposition: form-data; name="photo"; filename="a.png"', ['photo']],
  ])('%j gives %j', (block, names) => {
    expect(partNames(block)).toEqual(names);
  });
});
