/**
 * Text from Redis or from the gateway's callers (ids, clients, methods, Telegram's
 * answers) as it may reach a terminal: control characters, and the line and paragraph
 * separators, as `\uXXXX`, so they print instead of acting on the terminal.
 * JSON.stringify already escapes C0 in a result; C1 and U+2028/2029 it leaves as they are.
 */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
