import { Validator, type ValidationError, type ValidatorOptions } from 'class-validator';
import { isPlainObject } from './dto/field.decorators';

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
): (input: unknown) => Validated<T> {
  return (input) => {
    if (!isPlainObject(input)) return { ok: false, problems: ['the body must be a JSON object'] };
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

function describe(errors: readonly ValidationError[]): string[] {
  return errors.flatMap((error) =>
    Object.entries(error.constraints ?? {}).map(([rule, message]) =>
      rule === 'whitelistValidation'
        ? `${error.property} is not a field of this call (Bot API parameters go in options)`
        : message,
    ),
  );
}
