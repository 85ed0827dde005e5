import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from './headless-chromium';

describe('findChromium', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'relaygram-chromium-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fakeBrowser = (name: string) => {
    const path = join(dir, name);
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return path;
  };

  it('takes CHROME_PATH first, and only when it is executable', () => {
    const path = fakeBrowser('my-chrome');
    expect(findChromium({ CHROME_PATH: path, PATH: '' })).toBe(path);
    expect(findChromium({ CHROME_PATH: join(dir, 'missing'), PATH: '' })).toBeUndefined();
  });

  it('finds chromium or google-chrome on PATH', () => {
    const path = fakeBrowser('google-chrome');
    expect(findChromium({ PATH: `/nonexistent:${dir}` })).toBe(path);
  });
});
