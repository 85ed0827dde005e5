import { validateSync, type ValidationError } from 'class-validator';
import type { Finding, ProblemList } from '../problem-list';
import type { PathSegment } from '../yaml-path';
import type { ExplainContext } from './field.decorators';

/**
 * Runs the class-validator rules of a DTO tree and reports each failure as one problem
 * at its YAML path. Unknown keys are found by whitelisting: a key without rules is one
 * the schema does not have.
 */
export function reportValidationProblems(dto: object, problems: ProblemList): void {
  const errors = validateSync(dto, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    validationError: { target: false, value: true },
  });
  report(errors, [], dto, problems);
}

function report(
  errors: readonly ValidationError[],
  parentPath: readonly PathSegment[],
  parentValue: unknown,
  problems: ProblemList,
): void {
  for (const error of errors) {
    // class-validator names items of a validated list by their index, as a string.
    const segment = Array.isArray(parentValue) ? Number(error.property) : error.property;
    const path = [...parentPath, segment];
    for (const finding of findingsOf(error))
      problems.add([...path, ...finding.path], finding.message);
    if (error.children?.length) report(error.children, path, error.value, problems);
  }
}

function findingsOf(error: ValidationError): Finding[] {
  const constraints = error.constraints ?? {};
  const [type] = Object.keys(constraints);
  if (type === undefined) return [];
  if (type === 'whitelistValidation') return [{ path: [], message: 'unknown key' }];
  if (type === 'nestedValidation') return [{ path: [], message: 'must be a mapping' }];
  const context = error.contexts?.[type] as Partial<ExplainContext> | undefined;
  if (typeof context?.explain === 'function') return context.explain(error.value);
  return [{ path: [], message: constraints[type] }];
}
