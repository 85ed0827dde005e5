// `bot<id>:<secret>` as it appears in Bot API paths, with the colon raw or percent-encoded.
const PREFIXED_TOKEN = /bot(\d+)(?::|%3A)[A-Za-z0-9_-]+/gi;
// A bare token: real secrets are 35 characters; 30+ keeps `12:30:00`-like text intact.
const BARE_TOKEN = /(?<![A-Za-z0-9_-])(\d+)(?::|%3A)[A-Za-z0-9_-]{30,}/gi;

/**
 * Replaces every bot token in `text` with `bot<id>:***` (or `<id>:***` for a bare
 * token), keeping the numeric bot id so log lines and paths stay useful.
 */
export function redactToken(text: string): string {
  return text.replace(PREFIXED_TOKEN, 'bot$1:***').replace(BARE_TOKEN, '$1:***');
}
