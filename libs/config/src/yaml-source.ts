import { readFileSync } from 'node:fs';
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
        return `${file}:${line}:${col}: ${firstLine(issue.message)}`;
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
  return { ok: true, data, locate: locator(doc) };
}

function locator(doc: Document): Locator {
  return (path: readonly PathSegment[]) => {
    for (let depth = path.length; depth > 0; depth--) {
      const node: unknown = doc.getIn(path.slice(0, depth), true);
      const start = rangeStart(node);
      if (start !== undefined) return start;
    }
    return 0;
  };
}

function rangeStart(node: unknown): number | undefined {
  if (typeof node !== 'object' || node === null || !('range' in node)) return undefined;
  const range = (node as { range?: unknown }).range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
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

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0].trim();
}
