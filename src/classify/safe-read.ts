/**
 * Reads `key` from a thrown value without ever throwing: errors come from anywhere, and a
 * classifier that throws on a getter, a revoked Proxy or a null-prototype object would turn
 * one failure into a crash of the retry loop. Non-objects read as `undefined`.
 */
export function readProperty(value: unknown, key: string): unknown {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** {@link readProperty}, kept only when it is a string. */
export function readString(value: unknown, key: string): string | undefined {
  const property = readProperty(value, key);
  return typeof property === 'string' ? property : undefined;
}

/**
 * The string entries of a fetch `Headers` (or anything with a `forEach` of value and name), as
 * a plain record; none when they cannot be read (a hostile or broken object).
 */
export function readHeaders(headers: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  const forEach = readProperty(headers, 'forEach');
  if (typeof forEach !== 'function') return record;
  try {
    forEach.call(headers, (value: unknown, name: unknown) => {
      if (typeof name === 'string' && typeof value === 'string') record[name] = value;
    });
  } catch {
    // Headers that cannot be read: none.
  }
  return record;
}
