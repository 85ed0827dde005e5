import { createHash } from 'node:crypto';
import type { ProblemList } from './problem-list';
import { ENV_NAME } from './schema/config-rules';
import { Secret } from './secret';
import type { PathSegment } from './yaml-path';

/** Says what is wrong with a secret value, phrased to follow "environment variable X". */
export type SecretRule = (value: string) => string | undefined;

/**
 * Resolves `*_env` keys. Problems name the key's YAML path and the variable, never the
 * value. With `noEnv` every well-formed name resolves to an empty Secret and value rules
 * are skipped, so a file can be checked away from its secrets.
 */
export class EnvSecrets {
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    readonly noEnv: boolean,
    private readonly problems: ProblemList,
  ) {}

  /** Undefined when the name is malformed (the field rules report that) or the value is bad. */
  resolve(path: readonly PathSegment[], name: unknown, rule?: SecretRule): Secret | undefined {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) return undefined;
    if (this.noEnv) return new Secret('');
    const value = this.env[name];
    if (value === undefined) {
      this.problems.add(path, `environment variable ${name} is not set`);
      return undefined;
    }
    if (value === '') {
      this.problems.add(path, `environment variable ${name} is set but empty`);
      return undefined;
    }
    const problem = rule?.(value);
    if (problem !== undefined) {
      this.problems.add(path, `environment variable ${name} ${problem}`);
      return undefined;
    }
    return new Secret(value);
  }

  /**
   * What makes two secrets the same: the SHA-256 digest of the value, or without env
   * vars the variable's name. Digests keep values out of the maps built to compare them.
   */
  identity(name: string, secret: Secret): string {
    if (this.noEnv) return `env:${name}`;
    return `sha256:${createHash('sha256').update(secret.reveal()).digest('hex')}`;
  }
}
