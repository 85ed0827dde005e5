// class-transformer's @Type reads design:type metadata, so the polyfill must load first.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  Matches,
  Max,
  Min,
  registerDecorator,
  ValidateNested,
} from 'class-validator';
import { formatDuration, parseDuration } from '../duration';
import type { Finding } from '../problem-list';
import { DURATION_RULE, ENV_NAME, ENV_NAME_RULE, NAME, NAME_RULE } from './config-rules';
import { httpUrlProblem, redisUrlProblem } from './value-checks';

/** Says what is wrong with a value (a message to follow `<path>: `), or undefined. */
export type ValueRule = (value: unknown, owner: object) => string | undefined;

/**
 * Context attached to a rule whose findings sit below the key itself (list items), so
 * problem reporting can name `routes[0].match.commands[2]` rather than the whole list.
 */
export interface ExplainContext {
  explain(value: unknown): Finding[];
}

/*
 * Every key carries one message, whichever of its constraints fails (validation stops at
 * the first one), so each problem is exactly one line whatever the decorator order.
 */

export function Required(message = 'required'): PropertyDecorator {
  return IsDefined({ message });
}

export function IsName(): PropertyDecorator {
  return Matches(NAME, { message: NAME_RULE });
}

export function IsEnvName(): PropertyDecorator {
  return Matches(ENV_NAME, { message: ENV_NAME_RULE });
}

export function MatchesRule(pattern: RegExp, message: string): PropertyDecorator {
  return Matches(pattern, { message });
}

export function IsBool(): PropertyDecorator {
  return IsBoolean({ message: 'must be true or false' });
}

export function IsMapping(): PropertyDecorator {
  return IsObject({ message: 'must be a mapping' });
}

export function IsOneOf(values: readonly string[]): PropertyDecorator {
  const listed =
    values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values[0];
  return IsIn([...values], { message: `must be ${listed}` });
}

export function IsIntInRange(min: number, max: number): PropertyDecorator {
  const message = `must be an integer from ${min} to ${max}`;
  return compose(IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

/** A YAML number (fractions allowed) from `min` to `max`; `above` excludes `min` itself. */
export function IsNumberInRange(
  min: number,
  max: number,
  options: { above?: boolean } = {},
): PropertyDecorator {
  const message = options.above
    ? `must be a number above ${min} and at most ${max}`
    : `must be a number from ${min} to ${max}`;
  return CheckedBy('numberInRange', (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return message;
    if (options.above ? value <= min : value < min) return message;
    return value > max ? message : undefined;
  });
}

export function IsHttpUrl(credentialsHint?: string): PropertyDecorator {
  return CheckedBy('httpUrl', (value) => httpUrlProblem(value, credentialsHint));
}

export function IsRedisUrl(): PropertyDecorator {
  return CheckedBy('redisUrl', redisUrlProblem);
}

export function IsDuration(minMs: number, maxMs: number): PropertyDecorator {
  return CheckedBy('duration', (value) => {
    const ms = parseDuration(value);
    if (ms === undefined) return DURATION_RULE;
    if (ms < minMs || ms > maxMs) {
      return `must be from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`;
    }
    return undefined;
  });
}

/** A nested mapping (or list of mappings) validated against its own DTO class. */
export function Nested(type: () => new () => object): PropertyDecorator {
  return compose(Type(type), ValidateNested());
}

/** A rule whose message depends on what is wrong, or on sibling keys (`owner`). */
export function CheckedBy(name: string, rule: ValueRule): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value, args) => rule(value, args?.object ?? {}) === undefined,
        defaultMessage: (args) => (args ? (rule(args.value, args.object) ?? '') : ''),
      },
    });
}

export interface ListOptions {
  /** Set when an empty list is a mistake; the message says so. */
  readonly emptyMessage?: string;
}

/** A YAML sequence whose items each pass `item`; a bad item is reported at its own index. */
export function ListOf(item: ValueRule, options: ListOptions = {}): PropertyDecorator {
  const context: ExplainContext = {
    explain: (value) => listFindings(value, item, options),
  };
  return (target, propertyName) =>
    registerDecorator({
      name: 'listOf',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { context },
      validator: {
        validate: (value) => context.explain(value).length === 0,
        defaultMessage: (args) => context.explain(args?.value)[0]?.message ?? '',
      },
    });
}

function listFindings(value: unknown, item: ValueRule, options: ListOptions): Finding[] {
  if (!Array.isArray(value)) return [{ path: [], message: 'must be a list' }];
  if (value.length === 0 && options.emptyMessage) {
    return [{ path: [], message: options.emptyMessage }];
  }
  const findings: Finding[] = [];
  value.forEach((entry: unknown, index) => {
    const message = item(entry, value);
    if (message !== undefined) findings.push({ path: [index], message });
  });
  return findings;
}

function compose(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, propertyName) => {
    for (const decorator of decorators) decorator(target, propertyName);
  };
}
