import { createConfig, lintFromString } from '@redocly/openapi-core';

/** A problem Redocly's linter found, as one line: severity, rule, where, what. */
export type LintProblem = string;

/**
 * Lints an OpenAPI document with Redocly's `recommended` rules (as `redocly lint` does, less
 * `operation-4xx-response` and `no-ambiguous-paths`),
 * answering every problem, warnings included: a clean document answers none.
 */
export async function lintApiDocument(document: object, name: string): Promise<LintProblem[]> {
  const config = await createConfig({
    extends: ['recommended'],
    rules: {
      // Health probes and the documents themselves have no client error to answer.
      'operation-4xx-response': 'off',
      // REST paths name the bot first, so `/api/v1/{botId}/outbox` has the shape of
      // `/api/v1/raw/{method}` and `/api/v1/outbox/{id}` (SPEC's names); the router
      // takes the literal segment first, as OpenAPI does.
      'no-ambiguous-paths': 'off',
    },
  });
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: `${name}.json`,
    config,
  });
  return problems.map((problem) => {
    const where = problem.location.map((l) => l.pointer).join(', ');
    return `${problem.severity} ${problem.ruleId} at ${where}: ${problem.message}`;
  });
}
