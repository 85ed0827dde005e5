import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '@relaygram/contracts';

/**
 * The admin page's files live in `libs/admin/public`, beside both `src` and `dist`, so
 * the same relative path finds them in development, tests and the built image.
 */
export const ADMIN_PUBLIC_DIR = join(__dirname, '..', '..', 'public');

export interface AdminPageAssets {
  html: Buffer;
  script: Buffer;
  style: Buffer;
}

export function loadAdminPageAssets(dir = ADMIN_PUBLIC_DIR): AdminPageAssets {
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name));
    } catch (error) {
      throw new Error(`admin page: cannot read ${join(dir, name)} (${errorMessage(error)})`);
    }
  };
  return { html: read('index.html'), script: read('admin.js'), style: read('admin.css') };
}
