/**
 * The text of each element of the `result` array of a Bot API answer, exactly as sent:
 * getUpdates' updates keep Telegram's bytes (escapes, number spellings such as `1.0`,
 * integers beyond 2^53), which a parse and re-serialisation would change. Undefined
 * when the answer is not an object with a `result` array (the caller parses it anyway).
 */
export function resultElementTexts(text: string): string[] | undefined {
  try {
    let i = skipSpace(text, 0);
    if (text[i] !== '{') return undefined;
    i = skipSpace(text, i + 1);
    while (text[i] === '"') {
      const keyEnd = endOfString(text, i);
      const key: unknown = JSON.parse(text.slice(i, keyEnd));
      i = skipSpace(text, keyEnd);
      if (text[i] !== ':') return undefined;
      i = skipSpace(text, i + 1);
      if (key === 'result') return text[i] === '[' ? arrayElements(text, i) : undefined;
      i = skipSpace(text, endOfValue(text, i));
      if (text[i] !== ',') return undefined;
      i = skipSpace(text, i + 1);
    }
    return undefined;
  } catch {
    return undefined;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `i` at an opening quote; the index after the closing one. */
function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  throw new Error('unterminated string');
}

/** `i` at the first character of a value; the index after its last. */
function endOfValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return endOfString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') j = endOfString(text, j) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('unterminated value');
  }
  let j = i;
  while (j < text.length && !',}] \t\r\n'.includes(text[j])) j++;
  if (j === i) throw new Error('no value');
  return j;
}

function arrayElements(text: string, i: number): string[] | undefined {
  const elements: string[] = [];
  let j = skipSpace(text, i + 1);
  if (text[j] === ']') return elements;
  for (;;) {
    const end = endOfValue(text, j);
    elements.push(text.slice(j, end));
    j = skipSpace(text, end);
    if (text[j] === ']') return elements;
    if (text[j] !== ',') return undefined;
    j = skipSpace(text, j + 1);
  }
}
