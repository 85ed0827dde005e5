import type { Finding } from '../problem-list';
import type { PathSegment } from '../yaml-path';

// No config key is named like an Object.prototype member, and such keys would slip past
// class-validator's whitelist (it looks keys up on a plain object) and class-transformer.
const OBJECT_MEMBERS = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * The parsed YAML reduced to what the schema can describe: mappings, lists and scalars.
 * Keys named like Object.prototype members are dropped, values of other kinds (YAML tags
 * such as !!binary, !!set, !!omap) become null; each is reported as a finding.
 */
export function toPlainData(
  value: unknown,
  findings: Finding[],
  path: PathSegment[] = [],
): unknown {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value;
  if (Array.isArray(value)) {
    return value.map((item: unknown, index) => toPlainData(item, findings, [...path, index]));
  }
  if (!isPlainObject(value)) {
    findings.push({
      path,
      message: 'a YAML tag like !!binary, !!set or !!omap cannot be used in a config',
    });
    return null;
  }
  const plain: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (OBJECT_MEMBERS.has(key)) findings.push({ path: [...path, key], message: 'unknown key' });
    else plain[key] = toPlainData(child, findings, [...path, key]);
  }
  return plain;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
