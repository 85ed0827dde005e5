export type BodyKind =
  | { kind: 'json' }
  | { kind: 'form' }
  | { kind: 'multipart'; boundary: string }
  | { kind: 'opaque' }
  | { kind: 'ambiguous' };

const MARKERS = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];
const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i;

/**
 * How Telegram will read a body. Its server looks for these media types anywhere in
 * the Content-Type, not only as the media type itself, so this does the same: a body
 * Fastify would call text/plain may still be parsed by Telegram as JSON, and must be
 * checked like JSON. A header naming two of them is refused rather than guessed.
 */
export function bodyKind(contentType: string | undefined): BodyKind {
  if (!contentType) return { kind: 'opaque' };
  const lower = contentType.toLowerCase();
  const found = MARKERS.filter((m) => lower.includes(m));
  if (found.length > 1) return { kind: 'ambiguous' };
  switch (found[0]) {
    case 'application/json':
      return { kind: 'json' };
    case 'application/x-www-form-urlencoded':
      return { kind: 'form' };
    case 'multipart/form-data': {
      const match = BOUNDARY.exec(contentType);
      const boundary = match?.[1] ?? match?.[2];
      return boundary ? { kind: 'multipart', boundary } : { kind: 'ambiguous' };
    }
    default:
      return { kind: 'opaque' };
  }
}
