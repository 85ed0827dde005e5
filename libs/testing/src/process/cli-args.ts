/**
 * Walks a tool's `--flag value` arguments. A flag's value is the next argument, and
 * never another flag: `--json --quick` is a mistake, not a file named `--quick`.
 */
export class CliArgs {
  #index = -1;

  constructor(private readonly argv: readonly string[]) {}

  next(): string | undefined {
    return this.argv[++this.#index];
  }

  /** The next argument when it is a value (`--cpu-prof [dir]`); a flag stays for next(). */
  optionalValue(): string | undefined {
    const next = this.argv[this.#index + 1];
    if (next === undefined || next.startsWith('--')) return undefined;
    this.#index++;
    return next;
  }

  valueOf(flag: string): string {
    const next = this.argv[++this.#index];
    if (next === undefined || next.startsWith('--')) throw new Error(`${flag} needs a value`);
    return next;
  }
}
