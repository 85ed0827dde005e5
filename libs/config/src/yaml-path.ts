/** One step into the YAML document: a mapping key or a sequence index. */
export type PathSegment = string | number;

/** `['routes', 2, 'target_url']` → `routes[2].target_url`, the way problems name a key. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}
