/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON-like values (object key order ignored). Pure. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The RFC 7386 JSON merge patch that turns `from` into `to`: changed keys
 * with their new values, removed keys as null, arrays replaced whole.
 * Returns undefined when nothing differs. Pure.
 */
export function mergePatchFor(from: unknown, to: unknown): unknown {
  if (deepEqual(from, to)) return undefined;
  if (!isObject(from) || !isObject(to)) return to ?? null;
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    const a = from[key];
    const b = to[key];
    if (b === undefined) {
      if (a !== undefined) patch[key] = null;
      continue;
    }
    const sub = a === undefined ? b : mergePatchFor(a, b);
    if (sub !== undefined) patch[key] = sub;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
