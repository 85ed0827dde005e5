export interface DockerInstruction {
  keyword: string;
  args: string;
}

export interface DockerStage {
  name: string;
  from: string;
  instructions: DockerInstruction[];
}

export interface ParsedDockerfile {
  /** ARGs before the first FROM. */
  globals: DockerInstruction[];
  stages: DockerStage[];
}

/**
 * Enough of the Dockerfile grammar to check ours: comments, `\` continuations (comment
 * lines inside a continued instruction are dropped, as Docker does), and stages.
 */
export function parseDockerfile(text: string): ParsedDockerfile {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) continue;
    if (!pending && !line.trim()) continue;
    const continued = line.endsWith('\\');
    pending += (pending ? ' ' : '') + (continued ? line.slice(0, -1) : line).trim();
    if (!continued) {
      logical.push(pending);
      pending = '';
    }
  }
  if (pending) logical.push(pending);

  const parsed: ParsedDockerfile = { globals: [], stages: [] };
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      const [, from, name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      parsed.stages.push({ name: name ?? String(parsed.stages.length), from, instructions: [] });
    } else if (parsed.stages.length === 0) {
      parsed.globals.push(instruction);
    } else {
      parsed.stages.at(-1)!.instructions.push(instruction);
    }
  }
  return parsed;
}

export function instructionsOf(stage: DockerStage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}
