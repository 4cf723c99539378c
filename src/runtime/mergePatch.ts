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
  return mergePatchForAny([from], to);
}

/**
 * One RFC 7386 JSON merge patch that turns each of `froms` into `to` (for a target whose current
 * state is one of them, not known which): every key that differs in any of them, with its new value
 * or null. Undefined when none differs. Pure.
 */
export function mergePatchForAny(froms: readonly unknown[], to: unknown): unknown {
  if (froms.every((from) => deepEqual(from, to))) return undefined;
  if (!isObject(to) || !froms.every(isObject)) return to ?? null;
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...froms.flatMap((f) => Object.keys(f)), ...Object.keys(to)])) {
    const b = to[key];
    const as = froms.map((f) => f[key]);
    if (b === undefined) {
      if (as.some((a) => a !== undefined)) patch[key] = null;
      continue;
    }
    const sub = as.some((a) => a === undefined) ? b : mergePatchForAny(as, b);
    if (sub !== undefined) patch[key] = sub;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
