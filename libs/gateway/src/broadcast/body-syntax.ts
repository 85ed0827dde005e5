/**
 * The pieces of BroadcastBodyParser: its options, events and states, JSON's structural
 * bytes (all ASCII), and the collector that keeps a token's bytes across chunks until it
 * is whole.
 */

export interface BodyParserOptions {
  /** The field whose value is the streamed list. */
  listField: string;
  /** The other fields the object may have; any other is refused. */
  fields: readonly string[];
  /** Bytes one value of `fields` may take. */
  maxValueBytes: number;
}

export type BodyEvent =
  /** An item of the list: a string decoded, a number as JS reads it; `index` counts from 0. */
  | { type: 'item'; value: string | number; index: number; offset: number }
  /** A whole value of another field, as its JSON text (not parsed: the caller does). */
  | { type: 'field'; field: string; text: string; offset: number };

export type State =
  | 'start'
  | 'bom'
  | 'first-key'
  | 'next-key'
  | 'key'
  | 'colon'
  | 'value'
  | 'raw'
  | 'first-item'
  | 'next-item'
  | 'item-string'
  | 'item-number'
  | 'after-item'
  | 'after-value'
  | 'end';

export class BodySyntaxError extends Error {
  constructor(
    message: string,
    /** Where in the body (bytes from 0) the problem is. */
    readonly offset: number,
  ) {
    super(message);
    this.name = 'BodySyntaxError';
  }
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_LIST = 0x5b;
export const CLOSE_LIST = 0x5d;
/** A string's token starts with its opening quote, so its text is the JSON of the string. */
export const OPENING_QUOTE = Buffer.from('"');

export function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function isNumberByte(byte: number): boolean {
  // 0-9 - + . e E
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2b ||
    byte === 0x2e ||
    byte === 0x65 ||
    byte === 0x45
  );
}

/** How a byte is named in an error: the character when printable ASCII, else its code. */
export function shown(byte: number): string {
  return byte > 0x20 && byte < 0x7f
    ? `'${String.fromCharCode(byte)}'`
    : `byte 0x${byte.toString(16).padStart(2, '0')}`;
}

/** The bytes of one token or value, collected across chunks. */
export class Collector {
  #parts: Buffer[] = [];
  length = 0;
  start = 0;

  add(part: Buffer): void {
    if (part.length === 0) return;
    this.#parts.push(part);
    this.length += part.length;
  }

  take(): string {
    const text = Buffer.concat(this.#parts, this.length).toString('utf8');
    this.#parts = [];
    this.length = 0;
    return text;
  }
}
