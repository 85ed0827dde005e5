import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The checkout's root (the package.json named relaygram), from source or from dist. */
export function workspaceRoot(): string {
  let dir = __dirname;
  while (dir !== dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'relaygram') {
      return dir;
    }
    dir = dirname(dir);
  }
  throw new Error('cannot find the workspace root (package.json named relaygram)');
}
