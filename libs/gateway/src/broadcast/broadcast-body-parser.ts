/**
 * An incremental parser for one JSON object whose fields are known: one of them a long
 * list of scalars (a broadcast's `chat_ids`), read item by item as the bytes arrive and
 * never held whole, the others small values handed over as their JSON text. Pure: Buffer
 * chunks in, events out, a `BodySyntaxError` with the byte offset on the first mistake.
 *
 * It works on bytes: every byte JSON gives meaning to is ASCII, and UTF-8 never uses
 * ASCII bytes inside a multi-byte character, so a chunk may end anywhere (inside a
 * string, an escape or a character) and the text of a value is decoded once it is whole.
 */

import {
  BACKSLASH,
  BodySyntaxError,
  CLOSE_LIST,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  Collector,
  isNumberByte,
  isSpace,
  OPEN_LIST,
  OPEN_OBJECT,
  OPENING_QUOTE,
  QUOTE,
  shown,
  type BodyEvent,
  type BodyParserOptions,
  type State,
} from './body-syntax';

export { BodySyntaxError, type BodyEvent, type BodyParserOptions } from './body-syntax';

/** Names and list items are short: a Telegram chat id or @username is far below this. */
const MAX_NAME_BYTES = 256;
const MAX_ITEM_BYTES = 256;
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Feed it with `push(chunk)` as the body arrives and `end()` when it has; both answer
 * the events the bytes completed, in body order.
 */
export class BroadcastBodyParser {
  readonly #options: BodyParserOptions;
  readonly #known: ReadonlySet<string>;
  readonly #seen = new Set<string>();
  #state: State = 'start';
  /** Bytes consumed before the current chunk. */
  #base = 0;
  #field = '';
  #items = 0;
  readonly #token = new Collector();
  // Strings (names, items, string values) and containers being read.
  #escaped = false;
  #hasEscape = false;
  #inString = false;
  #depth = 0;
  #rawKind: 'container' | 'string' | 'scalar' = 'scalar';
  #events: BodyEvent[] = [];
  /** The last step ended the token it was reading. */
  #closed = false;

  constructor(options: BodyParserOptions) {
    this.#options = options;
    this.#known = new Set([options.listField, ...options.fields]);
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.#base;
  }

  /** Whether the body named this field (the list's value may still be arriving). */
  has(field: string): boolean {
    return this.#seen.has(field);
  }

  push(chunk: Buffer): BodyEvent[] {
    this.#events = [];
    let i = 0;
    let tokenFrom = -1;
    while (i < chunk.length) {
      const state = this.#state;
      const collecting =
        state === 'key' || state === 'raw' || state === 'item-string' || state === 'item-number';
      if (collecting && tokenFrom < 0) tokenFrom = i;
      this.#closed = false;
      i = this.#step(chunk, i, tokenFrom);
      if (this.#closed) tokenFrom = -1;
    }
    if (tokenFrom >= 0) this.#collect(chunk.subarray(tokenFrom));
    this.#base += chunk.length;
    return this.#events;
  }

  /** The body is over: an error unless its object is complete. */
  end(): BodyEvent[] {
    if (this.#state === 'end') return [];
    const at = this.#base;
    if (this.#state === 'start' || this.#state === 'bom') {
      throw new BodySyntaxError('the body is empty: it must be a JSON object', at);
    }
    throw new BodySyntaxError(`the body ends at byte ${at}, before its JSON object does`, at);
  }

  /** One byte (or a run of them) of the current state; where to go on. */
  #step(chunk: Buffer, i: number, tokenFrom: number): number {
    const byte = chunk[i];
    const at = this.#base + i;
    switch (this.#state) {
      case 'start':
        if (byte === 0xef && at === 0) return this.#go('bom', i + 1);
        if (isSpace(byte)) return this.#go('start', i + 1);
        if (byte === OPEN_OBJECT) return this.#go('first-key', i + 1);
        return this.#fail(`the body must be a JSON object: expected '{', found ${shown(byte)}`, at);
      case 'bom':
        // A UTF-8 byte order mark (EF BB BF), as Fastify's JSON parser allows.
        if ((at === 1 && byte === 0xbb) || (at === 2 && byte === 0xbf)) {
          return this.#go(at === 2 ? 'start' : 'bom', i + 1);
        }
        return this.#fail(`the body is not UTF-8 JSON: unexpected ${shown(byte)}`, at);
      case 'first-key':
      case 'next-key':
        return this.#keyStart(byte, i, at);
      case 'key':
        return this.#string(chunk, i, tokenFrom, MAX_NAME_BYTES, (text) => this.#keyDone(text));
      case 'colon':
        if (isSpace(byte)) return this.#go('colon', i + 1);
        if (byte === COLON) return this.#go('value', i + 1);
        return this.#fail(`expected ':' after "${this.#field}", found ${shown(byte)}`, at);
      case 'value':
        return this.#valueStart(byte, i, at);
      case 'raw':
        return this.#raw(chunk, i, tokenFrom);
      case 'first-item':
      case 'next-item':
        return this.#itemStart(byte, i, at);
      case 'item-string':
        return this.#string(chunk, i, tokenFrom, MAX_ITEM_BYTES, (text) =>
          this.#itemStringDone(text),
        );
      case 'item-number':
        return this.#itemNumber(chunk, i, tokenFrom);
      case 'after-item':
        if (isSpace(byte)) return this.#go('after-item', i + 1);
        if (byte === COMMA) return this.#go('next-item', i + 1);
        if (byte === CLOSE_LIST) return this.#go('after-value', i + 1);
        return this.#fail(
          `expected ',' or ']' after ${this.#listItem(this.#items - 1)}, found ${shown(byte)}`,
          at,
        );
      case 'after-value':
        if (isSpace(byte)) return this.#go('after-value', i + 1);
        if (byte === COMMA) return this.#go('next-key', i + 1);
        if (byte === CLOSE_OBJECT) return this.#go('end', i + 1);
        return this.#fail(
          `expected ',' or '}' after the value of "${this.#field}", found ${shown(byte)}`,
          at,
        );
      case 'end':
        if (isSpace(byte)) return this.#go('end', i + 1);
        return this.#fail(`unexpected ${shown(byte)} after the body's JSON object`, at);
    }
  }

  #go(state: State, at: number): number {
    this.#state = state;
    return at;
  }

  #fail(message: string, offset: number): never {
    throw new BodySyntaxError(`${message} (at byte ${offset})`, offset);
  }

  #listItem(index: number): string {
    return `${this.#options.listField}[${index}]`;
  }

  #collect(part: Buffer): void {
    this.#token.add(part);
    const limit =
      this.#state === 'raw'
        ? this.#options.maxValueBytes
        : this.#state === 'key'
          ? MAX_NAME_BYTES
          : MAX_ITEM_BYTES;
    if (this.#token.length > limit) this.#tooLong();
  }

  #tooLong(): never {
    const start = this.#token.start;
    switch (this.#state) {
      case 'key':
        return this.#fail(`a field name is longer than ${MAX_NAME_BYTES} bytes`, start);
      case 'raw':
        return this.#fail(
          `the value of "${this.#field}" is larger than ${this.#options.maxValueBytes} bytes`,
          start,
        );
      default:
        return this.#fail(
          `${this.#listItem(this.#items)} is longer than ${MAX_ITEM_BYTES} bytes`,
          start,
        );
    }
  }

  #keyStart(byte: number, i: number, at: number): number {
    if (isSpace(byte)) return this.#go(this.#state, i + 1);
    if (byte === QUOTE) {
      this.#beginString(at);
      return this.#go('key', i + 1);
    }
    if (byte === CLOSE_OBJECT && this.#state === 'first-key') return this.#go('end', i + 1);
    return this.#fail(`expected a field name in quotes, found ${shown(byte)}`, at);
  }

  #beginString(at: number): void {
    this.#token.start = at;
    this.#token.add(OPENING_QUOTE);
    this.#escaped = false;
    this.#hasEscape = false;
  }

  /**
   * The bytes of a string up to its closing quote, which `done` gets (its text with the
   * quotes); the escape state carries over a chunk's end.
   */
  #string(
    chunk: Buffer,
    i: number,
    tokenFrom: number,
    limit: number,
    done: (text: string) => void,
  ): number {
    for (let j = i; j < chunk.length; j++) {
      const byte = chunk[j];
      if (this.#escaped) {
        this.#escaped = false;
        continue;
      }
      if (byte === BACKSLASH) {
        this.#escaped = true;
        this.#hasEscape = true;
      } else if (byte < 0x20) {
        this.#fail('a control character in a string: escape it', this.#base + j);
      } else if (byte === QUOTE) {
        if (this.#token.length + (j + 1 - tokenFrom) > limit) this.#tooLong();
        this.#token.add(chunk.subarray(tokenFrom, j + 1));
        done(this.#token.take());
        this.#closed = true;
        return j + 1;
      }
    }
    return chunk.length;
  }

  #decodeString(text: string): string {
    if (!this.#hasEscape) return text.slice(1, -1);
    try {
      return JSON.parse(text) as string;
    } catch {
      return this.#fail('an invalid escape in a string', this.#token.start);
    }
  }

  #keyDone(text: string): void {
    const name = this.#decodeString(text);
    this.#field = name;
    if (!this.#known.has(name)) {
      const known = [...this.#known].join(', ');
      this.#fail(`unknown field "${name}": the body's fields are ${known}`, this.#token.start);
    }
    if (this.#seen.has(name)) this.#fail(`"${name}" appears twice`, this.#token.start);
    this.#seen.add(name);
    this.#state = 'colon';
  }

  #valueStart(byte: number, i: number, at: number): number {
    if (isSpace(byte)) return this.#go('value', i + 1);
    if (this.#field === this.#options.listField) {
      if (byte === OPEN_LIST) return this.#go('first-item', i + 1);
      return this.#fail(`"${this.#field}" must be a JSON array, found ${shown(byte)}`, at);
    }
    this.#token.start = at;
    this.#escaped = false;
    this.#inString = false;
    if (byte === OPEN_OBJECT || byte === OPEN_LIST) {
      this.#rawKind = 'container';
      this.#depth = 0;
    } else if (byte === QUOTE) {
      this.#rawKind = 'string';
      this.#beginString(at);
      this.#state = 'raw';
      return i + 1;
    } else if (isNumberByte(byte) || byte === 0x74 || byte === 0x66 || byte === 0x6e) {
      // A number, true, false or null: it ends at the next delimiter.
      this.#rawKind = 'scalar';
    } else {
      return this.#fail(`expected the value of "${this.#field}", found ${shown(byte)}`, at);
    }
    this.#state = 'raw';
    return i;
  }

  /** A field's value, up to its end: a closing bracket at depth 0, a quote, or a delimiter. */
  #raw(chunk: Buffer, i: number, tokenFrom: number): number {
    if (this.#rawKind === 'string') {
      return this.#string(chunk, i, tokenFrom, this.#options.maxValueBytes, (text) =>
        this.#fieldDone(text),
      );
    }
    for (let j = i; j < chunk.length; j++) {
      const byte = chunk[j];
      if (this.#rawKind === 'scalar') {
        if (isSpace(byte) || byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_LIST) {
          return this.#rawDone(chunk, tokenFrom, j, j);
        }
        continue;
      }
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) this.#inString = false;
        continue;
      }
      if (byte === QUOTE) this.#inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_LIST) this.#depth++;
      else if ((byte === CLOSE_OBJECT || byte === CLOSE_LIST) && --this.#depth === 0) {
        return this.#rawDone(chunk, tokenFrom, j + 1, j + 1);
      }
    }
    return chunk.length;
  }

  #rawDone(chunk: Buffer, tokenFrom: number, end: number, resume: number): number {
    if (this.#token.length + (end - tokenFrom) > this.#options.maxValueBytes) {
      this.#tooLong();
    }
    this.#token.add(chunk.subarray(tokenFrom, end));
    this.#fieldDone(this.#token.take());
    this.#closed = true;
    return resume;
  }

  #fieldDone(text: string): void {
    this.#events.push({ type: 'field', field: this.#field, text, offset: this.#token.start });
    this.#state = 'after-value';
  }

  #itemStart(byte: number, i: number, at: number): number {
    if (isSpace(byte)) return this.#go(this.#state, i + 1);
    if (byte === CLOSE_LIST && this.#state === 'first-item') return this.#go('after-value', i + 1);
    if (byte === QUOTE) {
      this.#beginString(at);
      return this.#go('item-string', i + 1);
    }
    if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      this.#token.start = at;
      return this.#go('item-number', i);
    }
    return this.#fail(
      `${this.#listItem(this.#items)} must be a number or a string, found ${shown(byte)}`,
      at,
    );
  }

  #itemStringDone(text: string): void {
    this.#pushItem(this.#decodeString(text));
    this.#state = 'after-item';
  }

  #itemNumber(chunk: Buffer, i: number, tokenFrom: number): number {
    for (let j = i; j < chunk.length; j++) {
      if (isNumberByte(chunk[j])) continue;
      if (this.#token.length + (j - tokenFrom) > MAX_ITEM_BYTES) this.#tooLong();
      this.#token.add(chunk.subarray(tokenFrom, j));
      const text = this.#token.take();
      if (!JSON_NUMBER.test(text)) {
        this.#fail(
          `${this.#listItem(this.#items)} is not a JSON number: ${text}`,
          this.#token.start,
        );
      }
      this.#pushItem(Number(text));
      this.#state = 'after-item';
      this.#closed = true;
      return j;
    }
    return chunk.length;
  }

  #pushItem(value: string | number): void {
    this.#events.push({ type: 'item', value, index: this.#items, offset: this.#token.start });
    this.#items++;
  }
}
