import { readFileSync } from 'node:fs';
import { errorMessage } from '@relaygram/contracts';
import { LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import type { Locator } from './problem-list';
import type { PathSegment } from './yaml-path';

export type YamlSource =
  { ok: true; data: unknown; locate: Locator } | { ok: false; problems: string[] };

/**
 * Reads and parses one YAML file. Syntax errors, duplicate keys and unresolved tags or
 * aliases come back as `file:line:column: message` lines; the file's content never does.
 */
export function readYamlFile(file: string): YamlSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { ok: false, problems: [`${file}: ${readFailure(error)}`] };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const issues: YAMLError[] = [...doc.errors, ...doc.warnings];
  if (issues.length) {
    return {
      ok: false,
      problems: issues.map((issue) => {
        const { line, col } = lineCounter.linePos(issue.pos[0]);
        const message =
          issue.code === 'MULTIPLE_DOCS'
            ? 'a config file holds one YAML document; remove the second ---'
            : firstLine(issue.message);
        return `${file}:${line}:${col}: ${message}`;
      }),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (error) {
    // Aliases are resolved here: an unknown anchor or an alias bomb surfaces at this point.
    return { ok: false, problems: [`${file}: ${firstLine(errorMessage(error))}`] };
  }
  if (isRecursive(data)) {
    return { ok: false, problems: [`${file}: an alias refers to a node that contains it`] };
  }
  return { ok: true, data, locate: locator(doc) };
}

/** YAML lets an alias point into its own ancestor; nothing downstream can walk that. */
function isRecursive(value: unknown, ancestors = new Set<object>()): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (ancestors.has(value)) return true;
  ancestors.add(value);
  const found = Object.values(value).some((child) => isRecursive(child, ancestors));
  ancestors.delete(value);
  return found;
}

/**
 * A key's position is where its value starts. A key that is missing (`required`) is
 * placed at the end of the nearest mapping that exists, after that mapping's own keys.
 */
function locator(doc: Document): Locator {
  return (path: readonly PathSegment[]) => {
    const exact = nodeRange(doc.getIn(path, true));
    if (exact) return exact[0];
    for (let depth = path.length - 1; depth > 0; depth--) {
      const range = nodeRange(doc.getIn(path.slice(0, depth), true));
      if (range) return range[1];
    }
    return 0;
  };
}

function nodeRange(node: unknown): readonly [number, number] | undefined {
  if (typeof node !== 'object' || node === null || !('range' in node)) return undefined;
  const range = (node as { range?: unknown }).range;
  if (!Array.isArray(range) || typeof range[0] !== 'number' || typeof range[1] !== 'number') {
    return undefined;
  }
  return [range[0], range[1]];
}

function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'is a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return `cannot be read (${code ?? firstLine(errorMessage(error))})`;
  }
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0].trim();
}
