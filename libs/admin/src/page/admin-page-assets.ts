import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '@relaygram/contracts';

/**
 * The admin page's files live in `libs/admin/public`, beside both `src` and `dist`, so
 * the same relative path finds them in development, tests and the built image.
 */
export const ADMIN_PUBLIC_DIR = join(__dirname, '..', '..', 'public');

/** The page's scripts, in the order index.html loads them (each needs the ones before). */
export const ADMIN_SCRIPTS = [
  'admin-kit.js',
  'admin-charts.js',
  'admin-bots.js',
  'admin-trace.js',
  'admin-broadcasts.js',
  'admin-outbox.js',
  'admin.js',
] as const;
export type AdminScript = (typeof ADMIN_SCRIPTS)[number];

export interface AdminPageAssets {
  html: Buffer;
  scripts: Readonly<Record<AdminScript, Buffer>>;
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
  const scripts = Object.fromEntries(ADMIN_SCRIPTS.map((name) => [name, read(name)]));
  return {
    html: read('index.html'),
    scripts: scripts as Record<AdminScript, Buffer>,
    style: read('admin.css'),
  };
}
