/** One step into the YAML document: a mapping key or a sequence index. */
export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;
const MAX_QUOTED_KEY = 40;

/**
 * `['routes', 2, 'target_url']` → `routes[2].target_url`, the way problems name a key.
 * A key that is not a plain name (spaces, newlines, a YAML complex key) is quoted, so a
 * problem always stays on one line.
 */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else {
      const shown =
        segment.length > MAX_QUOTED_KEY ? `${segment.slice(0, MAX_QUOTED_KEY)}…` : segment;
      out += `[${JSON.stringify(shown)}]`;
    }
  }
  return out;
}
