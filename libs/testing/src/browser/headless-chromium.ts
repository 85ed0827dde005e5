import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where Chromium or Chrome usually live, after CHROME_PATH and PATH. */
const KNOWN_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];
const ON_PATH = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium (or Chrome) the browser tests drive: CHROME_PATH, else the first on
 * PATH, else the usual install places. Never downloaded: tests use what is installed.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROME_PATH) return executable(env.CHROME_PATH) ? env.CHROME_PATH : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of ON_PATH) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
  }
  return KNOWN_PATHS.find(executable);
}

/** Flags for a headless run on a machine without network (no background traffic). */
export const HEADLESS_CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/**
 * `describe` when a browser is there; else, outside CI, `describe.skip` with one line
 * saying why. In CI (`CI=true`) a missing browser fails the suite instead: CI installs
 * Debian's Chromium, and a silent skip there would hide the tests.
 */
export function describeWithChromium(name: string, body: (chromiumPath: string) => void): void {
  const path = findChromium();
  if (path) {
    describe(name, () => body(path));
    return;
  }
  const how =
    'set CHROME_PATH, or install Chromium (Debian: apt-get install chromium; macOS: Chrome in /Applications)';
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs Chromium or Chrome', () => {
        throw new Error(`no Chromium or Chrome found: ${how}`);
      });
    });
    return;
  }
  process.stderr.write(`skipping "${name}": no Chromium or Chrome found (${how})\n`);
  describe.skip(name, () => body(''));
}
