import {
  getMetadataStorage,
  Validator,
  type ValidationError,
  type ValidatorOptions,
} from 'class-validator';
import { fieldCheckOf, isPlainObject } from './dto/field.decorators';

export type Validated<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const VALIDATOR_OPTIONS: ValidatorOptions = Object.freeze({
  forbidNonWhitelisted: true,
  whitelist: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
});

const validator = new Validator();

/**
 * A validator for one DTO, built once at start: each request costs one instance and
 * one synchronous class-validator pass. Unknown top-level fields are refused rather
 * than dropped, so a misplaced Bot API parameter (`parse_mode` outside `options`) is
 * a 400 instead of a message sent without it.
 */
export function compileValidator<T extends object>(
  dto: new () => T,
  options: { precompiled?: boolean } = {},
): (input: unknown) => Validated<T> {
  const accepts = options.precompiled === false ? undefined : precompiled(dto);
  return (input) => {
    if (!isPlainObject(input)) return { ok: false, problems: ['the body must be a JSON object'] };
    if (accepts?.(input)) return { ok: true, value: toInstance(dto, input) };
    const instance = new dto();
    for (const key of Object.keys(input)) {
      // Object.assign would set the prototype for an own "__proto__" key.
      if (key === '__proto__') return { ok: false, problems: ['__proto__ is not a field'] };
      (instance as Record<string, unknown>)[key] = input[key];
    }
    const errors = validator.validateSync(instance, VALIDATOR_OPTIONS);
    return errors.length === 0
      ? { ok: true, value: instance }
      : { ok: false, problems: describe(errors) };
  };
}

function toInstance<T extends object>(dto: new () => T, input: Record<string, unknown>): T {
  const instance = new dto();
  for (const key of Object.keys(input)) (instance as Record<string, unknown>)[key] = input[key];
  return instance;
}

/**
 * The DTO's rules read once from class-validator's metadata, as one function that says
 * whether a body passes them all: most bodies do, and for them this replaces
 * class-validator's pass (its metadata lookups, an executor and error objects per call).
 * A body it does not accept goes through class-validator, which names the problems in
 * its words. Undefined when the DTO has a rule that is not one of our field decorators.
 */
function precompiled(
  dto: new () => object,
): ((input: Record<string, unknown>) => boolean) | undefined {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const checks: [string, (value: unknown) => string | undefined][] = [];
  for (const metadata of metadatas) {
    const check = fieldCheckOf(metadata.constraints?.[0]);
    if (!check || metadata.groups?.length || metadata.each) return undefined;
    checks.push([metadata.propertyName, check]);
  }
  const fields = new Set(checks.map(([name]) => name));
  return (input) => {
    // Whitelisting: a key that is no field (`__proto__` included) is class-validator's to name.
    for (const key of Object.keys(input)) if (!fields.has(key)) return false;
    for (const [name, check] of checks) if (check(input[name]) !== undefined) return false;
    return true;
  };
}

function describe(errors: readonly ValidationError[]): string[] {
  return errors.flatMap((error) =>
    Object.entries(error.constraints ?? {}).map(([rule, message]) =>
      rule === 'whitelistValidation'
        ? `${error.property} is not a field of this call (Bot API parameters go in options)`
        : message,
    ),
  );
}
