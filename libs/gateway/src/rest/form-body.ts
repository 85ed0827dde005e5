/** A form as an object without a prototype, so no field name can reach one. */
export function parseForm(text: string): Record<string, string> {
  const fields = Object.create(null) as Record<string, string>;
  for (const [name, value] of new URLSearchParams(text)) {
    // Telegram reads the first value of a repeated parameter.
    if (!(name in fields)) fields[name] = value;
  }
  return fields;
}
