import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface TestConfigFile {
  /** The YAML file to pass as RELAYGRAM_CONFIG. */
  path: string;
  /** The Redis key prefix it sets, unique to this file, so tests never touch real data. */
  prefix: string;
  remove(): void;
}

/**
 * Writes a Relaygram config for one test into a temp directory: `redis.prefix` is
 * unique, and `body` (YAML for bots, routes, clients...) follows it.
 */
export function writeTestConfig(body = '', options: { prefix?: string } = {}): TestConfigFile {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-test-'));
  const prefix = options.prefix ?? `t-${randomUUID().slice(0, 8)}`;
  const path = join(dir, 'relaygram.yaml');
  writeFileSync(path, `redis:\n  prefix: ${prefix}\n${body}`);
  return { path, prefix, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A config given as an object, written as YAML in a directory of its own. */
export function writeConfigObject(config: object): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-test-'));
  const path = join(dir, 'relaygram.yaml');
  writeFileSync(path, stringify(config));
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
