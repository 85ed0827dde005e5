import { asObject, type JsonObject } from './json-read';
import { payloadOf, specOf, updateType, type UpdateTypeSpec } from './update-extractors';
import type { Update } from './update.types';

const SLASH = 0x2f;
const AT = 0x40;

/**
 * The command a message opens with: the `bot_command` entity at offset 0 of its text
 * (or caption), lower-cased, without any `@username` suffix, e.g. `/admin`.
 *
 * A suffix must name this bot (case-insensitively): `/admin@otherbot` in a group is
 * addressed to another bot and is no command for this one. When this bot's username is
 * not known, a suffixed command cannot be told apart from one for another bot, so only
 * bare commands are accepted.
 */
export function command(update: Update, botUsername?: string): string | undefined {
  const type = updateType(update);
  const spec = specOf(type);
  if (spec === undefined || type === undefined) return undefined;
  const payload = payloadOf(update, type);
  return payload === undefined ? undefined : commandOf(spec, payload, botUsername);
}

export function commandOf(
  spec: UpdateTypeSpec,
  message: JsonObject,
  botUsername: string | undefined,
): string | undefined {
  if (!spec.messageLike) return undefined;
  // A message has either a text or a caption, never both.
  let text = message.text;
  let entities = message.entities;
  if (typeof text !== 'string') {
    text = message.caption;
    entities = message.caption_entities;
  }
  if (typeof text !== 'string' || text.charCodeAt(0) !== SLASH) return undefined;
  const length = commandEntityLength(entities);
  // `/` alone is no command; an entity running past the text is not Telegram's.
  if (length === undefined || length < 2 || length > text.length) return undefined;

  let nameEnd = 1;
  while (nameEnd < length && text.charCodeAt(nameEnd) !== AT) nameEnd++;
  if (nameEnd === 1) return undefined;
  if (nameEnd < length) {
    const suffixStart = nameEnd + 1;
    if (botUsername === undefined || suffixStart === length) return undefined;
    if (!isUsername(text, suffixStart, length, botUsername)) return undefined;
  }
  return text.slice(0, nameEnd).toLowerCase();
}

/** The length of the `bot_command` entity at offset 0, if there is one. */
function commandEntityLength(entities: unknown): number | undefined {
  if (!Array.isArray(entities)) return undefined;
  // Entities may overlap (a bold command), so look at every one, not only the first.
  for (let i = 0; i < entities.length; i++) {
    const entity = asObject(entities[i]);
    if (entity === undefined || entity.type !== 'bot_command' || entity.offset !== 0) continue;
    const length = entity.length;
    if (typeof length === 'number' && Number.isSafeInteger(length)) return length;
  }
  return undefined;
}

/**
 * Whether `text[start, end)` is `username` (a leading `@` on it ignored), compared
 * case-insensitively without allocating: usernames are ASCII letters, digits and `_`.
 */
function isUsername(text: string, start: number, end: number, username: string): boolean {
  const skip = username.charCodeAt(0) === AT ? 1 : 0;
  if (end - start !== username.length - skip) return false;
  for (let i = start, j = skip; i < end; i++, j++) {
    if (foldAscii(text.charCodeAt(i)) !== foldAscii(username.charCodeAt(j))) return false;
  }
  return true;
}

function foldAscii(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}
