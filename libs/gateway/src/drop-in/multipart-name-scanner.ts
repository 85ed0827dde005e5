const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const DASH_DASH = Buffer.from('--');
const MAX_HEADER_BYTES = 16 * 1024;
/** A captured field longer than this is reported without its value. */
const MAX_CAPTURED_BYTES = 1024;

export class MultipartScanError extends Error {
  override readonly name = 'MultipartScanError';
}

/**
 * What the scanner saw complete in a chunk: a part's header (`value` absent), or
 * the end of a part it was asked to capture (`value` is its text, or null when it
 * was longer than 1 KB).
 */
export interface ScannedPart {
  name: string;
  value?: string | null;
}

type State = 'delimiter' | 'after-delimiter' | 'padding' | 'headers' | 'epilogue';

/**
 * Reads the part names of a multipart/form-data body as it streams past, and the
 * values of the parts `capture` asks for, holding no more than one part header (or a
 * captured value) in memory. The bytes are not changed or kept: the body is relayed as
 * it is, and the caller stops relaying before a chunk that completes something it
 * refuses.
 */
export class MultipartNameScanner {
  readonly #delimiter: Buffer;
  readonly #capture: (name: string) => boolean;
  #state: State = 'delimiter';
  #carry: Buffer;
  /** The part being captured: its name and the bytes so far (null once too long). */
  #captured?: { name: string; bytes: Buffer[]; size: number };

  constructor(boundary: string, capture: (name: string) => boolean = () => false) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`);
    this.#capture = capture;
    // The first delimiter may open the body without a CRLF before it.
    this.#carry = CRLF;
  }

  push(chunk: Buffer): ScannedPart[] {
    const found: ScannedPart[] = [];
    let data = this.#carry.length ? Buffer.concat([this.#carry, chunk]) : chunk;
    this.#carry = Buffer.alloc(0);
    for (;;) {
      switch (this.#state) {
        case 'epilogue':
          return found;
        case 'delimiter': {
          const at = data.indexOf(this.#delimiter);
          if (at === -1) {
            const keep = Math.min(data.length, this.#delimiter.length - 1);
            this.#take(data.subarray(0, data.length - keep));
            this.#carry = Buffer.from(data.subarray(data.length - keep));
            return found;
          }
          this.#take(data.subarray(0, at));
          this.#endPart(found);
          data = data.subarray(at + this.#delimiter.length);
          this.#state = 'after-delimiter';
          break;
        }
        case 'after-delimiter': {
          if (data.length < 2) {
            this.#carry = data;
            return found;
          }
          this.#state = data.subarray(0, 2).equals(DASH_DASH) ? 'epilogue' : 'padding';
          break;
        }
        case 'padding': {
          const at = data.indexOf(CRLF);
          if (at === -1) {
            if (data.length > MAX_HEADER_BYTES) {
              throw new MultipartScanError('malformed multipart delimiter');
            }
            this.#carry = data;
            return found;
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
            return found;
          }
          const block = window.subarray(CRLF.length, Math.max(CRLF.length, at)).toString('latin1');
          for (const name of partNames(block)) {
            found.push({ name });
            if (!this.#captured && this.#capture(name))
              this.#captured = { name, bytes: [], size: 0 };
          }
          // The part body starts here; an empty one puts the next delimiter right at it.
          data = data.subarray(at + HEADER_END.length - CRLF.length);
          this.#state = 'delimiter';
          break;
        }
      }
    }
  }

  #take(bytes: Buffer): void {
    const captured = this.#captured;
    if (!captured || bytes.length === 0) return;
    captured.size += bytes.length;
    if (captured.size <= MAX_CAPTURED_BYTES) captured.bytes.push(Buffer.from(bytes));
  }

  #endPart(found: ScannedPart[]): void {
    const captured = this.#captured;
    if (!captured) return;
    this.#captured = undefined;
    found.push({
      name: captured.name,
      value:
        captured.size > MAX_CAPTURED_BYTES ? null : Buffer.concat(captured.bytes).toString('utf8'),
    });
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
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') {
      continue;
    }
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
