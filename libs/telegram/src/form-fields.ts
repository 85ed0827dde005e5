/**
 * A parameter as Telegram reads it from a form: scalars as text, objects and arrays
 * (reply_markup, entities, media) as JSON; null, undefined, functions and symbols are
 * left out, as JSON.stringify would leave them out of a JSON body.
 */
export function formFieldValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return value === null ? undefined : JSON.stringify(value);
    default:
      return undefined;
  }
}

export function urlencodedBody(params: Record<string, unknown> | undefined): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) {
    const text = formFieldValue(value);
    if (text !== undefined) form.append(name, text);
  }
  return form.toString();
}
