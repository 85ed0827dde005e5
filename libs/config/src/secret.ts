import { inspect } from 'node:util';

/**
 * A secret value (bot token, client token, signing secret...). It prints as `***`
 * wherever it ends up (template strings, JSON, util.inspect, pino), so a config object
 * can be logged whole without leaking; `reveal()` is the one way to read it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    Object.freeze(this);
  }

  reveal(): string {
    return this.#value;
  }

  get length(): number {
    return this.#value.length;
  }

  toString(): string {
    return '***';
  }

  toJSON(): string {
    return '***';
  }

  [inspect.custom](): string {
    return 'Secret(***)';
  }
}
