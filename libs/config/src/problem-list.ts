import { formatPath, type PathSegment } from './yaml-path';

/** Where a YAML path starts in the file, so problems can be listed in file order. */
export type Locator = (path: readonly PathSegment[]) => number;

/** A problem found below some node, with its path relative to that node. */
export interface Finding {
  readonly path: readonly PathSegment[];
  readonly message: string;
}

interface Entry {
  readonly line: string;
  readonly position: number;
  readonly seq: number;
}

/**
 * Collects one-line findings (problems or warnings), each naming its YAML path, and lists
 * them in the order their keys appear in the file so a long list reads top to bottom.
 * A path gets one finding, the first: a value of the wrong kind would otherwise also
 * fail every rule checked after the one that reported it.
 */
export class ProblemList {
  private readonly entries: Entry[] = [];
  private readonly paths = new Set<string>();

  constructor(private readonly locate: Locator) {}

  get size(): number {
    return this.entries.length;
  }

  add(path: readonly PathSegment[], message: string): void {
    this.push(formatPath(path), message, () => this.locate(path));
  }

  /** A finding about something outside the file (an environment variable): listed first. */
  addGlobal(name: string, message: string): void {
    this.push(name, message, () => -1);
  }

  lines(): string[] {
    return [...this.entries]
      .sort((a, b) => a.position - b.position || a.seq - b.seq)
      .map((entry) => entry.line);
  }

  private push(where: string, message: string, position: () => number): void {
    if (this.paths.has(where)) return;
    this.paths.add(where);
    this.entries.push({
      line: `${where}: ${message}`,
      position: position(),
      seq: this.entries.length,
    });
  }
}
