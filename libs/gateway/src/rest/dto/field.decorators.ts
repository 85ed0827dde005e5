import { registerDecorator, type ValidationArguments } from 'class-validator';
import type { JsonSchema } from '@relaygram/openapi';

type Check = (value: unknown, args: ValidationArguments) => string | undefined;

/**
 * What a field accepts, as JSON Schema, kept as the constraint of its class-validator
 * decorator: the OpenAPI document reads it from class-validator's metadata (dto-schema.ts),
 * so the check and its description are written side by side, once.
 */
export interface FieldSchema {
  readonly schema: JsonSchema;
  readonly required: boolean;
}

/**
 * One decorator per field and one message per problem, naming the field: a caller
 * sees `chat_id is required`, not three messages about the same missing value.
 */
function field(name: string, documented: FieldSchema, check: Check): PropertyDecorator {
  return (target, propertyName) => {
    FIELD_CHECKS.set(documented, check);
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [documented],
      validator: {
        validate: (value: unknown, args: ValidationArguments) => check(value, args) === undefined,
        // Asked only for a value that failed, so checking again costs nothing on success.
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${check(args.value, args) ?? 'is invalid'}`,
      },
    });
  };
}

/** Each field's check by its decorator's constraint, for the compiled validators. */
const FIELD_CHECKS = new WeakMap<object, Check>();

/**
 * The check of a field decorator from this file, found by the constraint class-validator
 * keeps for it; undefined for any other rule. Checks use only the value.
 */
export function fieldCheckOf(
  constraint: unknown,
): ((value: unknown) => string | undefined) | undefined {
  if (typeof constraint !== 'object' || constraint === null) return undefined;
  const check = FIELD_CHECKS.get(constraint);
  return check && ((value) => check(value, undefined as unknown as ValidationArguments));
}

const MAX_CHAT_USERNAME = 256;

/** Telegram's chat_id: an integer, or a string such as `@channelusername` or `"-100123"`. */
export function ChatId(options: { optional?: boolean } = {}): PropertyDecorator {
  const schema = {
    oneOf: [{ type: 'integer' }, { type: 'string', minLength: 1, maxLength: MAX_CHAT_USERNAME }],
    description: 'A chat id, or a username such as `@channelusername`',
  };
  return field('chatId', { schema, required: !options.optional }, (value) => {
    if (value === undefined || value === null) return options.optional ? undefined : 'is required';
    if (typeof value === 'number') {
      return Number.isSafeInteger(value) ? undefined : 'must be an integer or a string';
    }
    if (typeof value === 'string' && value.length > 0 && value.length <= MAX_CHAT_USERNAME) {
      return undefined;
    }
    return 'must be an integer or a non-empty string';
  });
}

export function PositiveInteger(): PropertyDecorator {
  const schema = { type: 'integer', minimum: 1 };
  return field('positiveInteger', { schema, required: true }, (value) => {
    if (value === undefined || value === null) return 'is required';
    return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
      ? undefined
      : 'must be a positive integer';
  });
}

export function NonEmptyText(): PropertyDecorator {
  const schema = { type: 'string', minLength: 1 };
  return field('nonEmptyText', { schema, required: true }, (value) => {
    if (value === undefined || value === null) return 'is required';
    return typeof value === 'string' && value.length > 0 ? undefined : 'must be a non-empty string';
  });
}

export function OptionalObject(): PropertyDecorator {
  const schema = { type: 'object', additionalProperties: true };
  return field('optionalObject', { schema, required: false }, (value) =>
    value === undefined || isPlainObject(value) ? undefined : 'must be a JSON object',
  );
}

/**
 * `options`: the method's other Bot API parameters, merged into the call. It may not
 * repeat a top-level field (which value would win?) nor carry `method`.
 */
export function BotApiOptions(...namedFields: string[]): PropertyDecorator {
  const taken = new Set([...namedFields, 'method']);
  const schema = {
    type: 'object',
    description:
      "The method's other Bot API parameters (parse_mode, reply_markup...), merged into " +
      `the call; not ${[...taken].join(', ')}`,
    propertyNames: {
      not: { anyOf: [{ enum: namedFields }, { pattern: '^[mM][eE][tT][hH][oO][dD]$' }] },
    },
    additionalProperties: true,
  };
  return field('botApiOptions', { schema, required: false }, (value) => {
    if (value === undefined) return undefined;
    if (!isPlainObject(value)) return 'must be a JSON object of Bot API parameters';
    for (const key of Object.keys(value)) {
      if (taken.has(key) || key.toLowerCase() === 'method') {
        return key.toLowerCase() === 'method'
          ? 'must not contain "method"'
          : `must not repeat the top-level field "${key}"`;
      }
    }
    return undefined;
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
