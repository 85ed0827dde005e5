import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface SecretFinding {
  /** The env var (or part) the secret comes from: never the value. */
  secret: string;
  file: string;
  count: number;
}

export interface NamedSecret {
  name: string;
  value: string;
}

const CHUNK = 8 * 1024 * 1024;

/** The spellings of a secret that could reach a file: as is, and URL-encoded. */
function spellings(value: string): string[] {
  const encoded = encodeURIComponent(value);
  return encoded === value ? [value] : [value, encoded];
}

/**
 * Looks for every secret in every file under `dir` (logs of every process, scraped
 * metrics, the answers the run read, Redis's AOF): a finding names the secret's env var
 * and the file, never the value. Files are read in chunks that overlap by the longest
 * secret, so a large log costs no more memory than a chunk.
 */
export function scanForSecrets(dir: string, secrets: readonly NamedSecret[]): SecretFinding[] {
  const needles = secrets.flatMap((s) =>
    spellings(s.value).map((spelling) => ({ name: s.name, bytes: Buffer.from(spelling) })),
  );
  const overlap = Math.max(0, ...needles.map((n) => n.bytes.length)) - 1;
  const findings = new Map<string, SecretFinding>();
  for (const file of filesUnder(dir)) {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(CHUNK + overlap);
      let carried = 0;
      let position = 0;
      for (;;) {
        const read = readSync(fd, buffer, carried, CHUNK, position);
        if (read === 0) break;
        position += read;
        const window = buffer.subarray(0, carried + read);
        for (const needle of needles) {
          let at = window.indexOf(needle.bytes);
          while (at !== -1) {
            // A match wholly inside the carried-over bytes was counted with the previous chunk.
            if (at + needle.bytes.length > carried) {
              const key = `${needle.name}\n${file}`;
              const finding = findings.get(key) ?? {
                secret: needle.name,
                file: relative(dir, file),
                count: 0,
              };
              finding.count++;
              findings.set(key, finding);
            }
            at = window.indexOf(needle.bytes, at + 1);
          }
        }
        carried = Math.min(overlap, window.length);
        window.copy(buffer, 0, window.length - carried, window.length);
      }
    } finally {
      closeSync(fd);
    }
  }
  return [...findings.values()];
}

function filesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(path));
    else if (entry.isFile() && statSync(path).size > 0) files.push(path);
  }
  return files;
}
