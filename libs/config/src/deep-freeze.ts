/** Freezes plain objects and arrays all the way down; class instances (Secret) freeze themselves. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
