import { inspect } from 'node:util';
import type { Secret } from '@relaygram/config';

/**
 * A stand-in for config's Secret (same printing rules, same `reveal()`), so these
 * tests do not load the config lib and the Nest modules its index pulls in.
 */
export function testSecret(value: string): Secret {
  const secret = {
    reveal: () => value,
    length: value.length,
    toString: () => '***',
    toJSON: () => '***',
    [inspect.custom]: () => 'Secret(***)',
  };
  return secret as unknown as Secret;
}
