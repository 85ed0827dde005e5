const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const DASH_DASH = Buffer.from('--');
const MAX_HEADER_BYTES = 16 * 1024;

export class MultipartScanError extends Error {
  override readonly name = 'MultipartScanError';
}

type State = 'delimiter' | 'after-delimiter' | 'padding' | 'headers' | 'epilogue';

/**
 * Reads the part names of a multipart/form-data body as it streams past, without
 * holding more than one part header (or a delimiter's length) in memory. The bytes
 * themselves are not changed or kept: the body is relayed as it is, and the caller
 * stops relaying before a chunk that completes a refused part's header.
 */
export class MultipartNameScanner {
  readonly #delimiter: Buffer;
  #state: State = 'delimiter';
  #carry: Buffer;

  constructor(boundary: string) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`);
    // The first delimiter may open the body without a CRLF before it.
    this.#carry = CRLF;
  }

  /** Names of the parts whose headers ended in this chunk, in order. */
  push(chunk: Buffer): string[] {
    const names: string[] = [];
    let data = this.#carry.length ? Buffer.concat([this.#carry, chunk]) : chunk;
    this.#carry = Buffer.alloc(0);
    for (;;) {
      switch (this.#state) {
        case 'epilogue':
          return names;
        case 'delimiter': {
          const at = data.indexOf(this.#delimiter);
          if (at === -1) {
            this.#carry = tail(data, this.#delimiter.length - 1);
            return names;
          }
          data = data.subarray(at + this.#delimiter.length);
          this.#state = 'after-delimiter';
          break;
        }
        case 'after-delimiter': {
          if (data.length < 2) {
            this.#carry = data;
            return names;
          }
          this.#state = data.subarray(0, 2).equals(DASH_DASH) ? 'epilogue' : 'padding';
          break;
        }
        case 'padding': {
          const at = data.indexOf(CRLF);
          if (at === -1) {
            if (data.length > MAX_HEADER_BYTES)
              throw new MultipartScanError('malformed multipart delimiter');
            this.#carry = data;
            return names;
          }
          data = data.subarray(at + CRLF.length);
          this.#state = 'headers';
          break;
        }
        case 'headers': {
          // With a CRLF in front, a part without headers (`\r\n` at once) ends the same way.
          const window = Buffer.concat([CRLF, data.subarray(0, MAX_HEADER_BYTES)]);
          const at = window.indexOf(HEADER_END);
          if (at === -1) {
            if (data.length >= MAX_HEADER_BYTES) {
              throw new MultipartScanError('part headers are too large');
            }
            this.#carry = data;
            return names;
          }
          names.push(
            ...partNames(
              window.subarray(CRLF.length, Math.max(CRLF.length, at)).toString('latin1'),
            ),
          );
          // The part body starts here; an empty one puts the next delimiter right at it.
          data = data.subarray(at + HEADER_END.length - CRLF.length);
          this.#state = 'delimiter';
          break;
        }
      }
    }
  }
}

/**
 * Every name a Content-Disposition header of the block gives (`name`, `name*`),
 * unquoted and unescaped the lenient ways parsers differ on, lower-cased.
 */
export function partNames(headerBlock: string): string[] {
  const names: string[] = [];
  // Unfold continuation lines first.
  const lines = headerBlock.replace(/\r\n[ \t]+/g, ' ').split('\r\n');
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition')
      continue;
    const params = line.slice(colon + 1);
    const pattern = /(?:^|;)\s*name(\*?)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s]*)/gi;
    for (const match of params.matchAll(pattern)) {
      const extended = match[1] === '*';
      let value = match[3] !== undefined ? match[3].replace(/\\(.)/g, '$1') : (match[2] ?? '');
      if (extended) value = value.replace(/^[^']*'[^']*'/, '');
      names.push(decodeLeniently(value).toLowerCase());
    }
  }
  return names;
}

function decodeLeniently(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function tail(data: Buffer, length: number): Buffer {
  return Buffer.from(data.subarray(Math.max(0, data.length - length)));
}
