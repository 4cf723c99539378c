// Gateway API hostnames: how a listener's hostname and a route's hostnames intersect, and which of
// two hostnames is more specific (the Gateway API's precedence: a name without a wildcard before
// one with, then the longer). Pure.

/** True when `name` is a wildcard hostname (`*.example.com`). Pure. */
export function isWildcard(name: string): boolean {
  return name.startsWith('*.');
}

/**
 * Whether wildcard `pattern` (`*.example.com`) covers `name`: `name` ends with `.example.com` and
 * has at least one label before it (`a.example.com`, `a.b.example.com`, `*.b.example.com`; never
 * `example.com`), as the Gateway API defines a wildcard: a suffix match. Case-insensitive. Pure.
 */
export function wildcardCovers(pattern: string, name: string): boolean {
  if (!isWildcard(pattern)) return false;
  const suffix = pattern.slice(1).toLowerCase();
  const n = name.toLowerCase();
  return n.length > suffix.length && n.endsWith(suffix);
}

/**
 * The hostname a listener's `hostname` and one route hostname have in common: the more specific
 * of the two when one covers the other (equal names, a wildcard covering a name or a narrower
 * wildcard), else undefined. An absent listener hostname takes any route hostname. Pure.
 */
export function intersectHostname(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined) return route;
  const l = listener.toLowerCase();
  const r = route.toLowerCase();
  if (l === r) return r;
  if (wildcardCovers(l, r)) return r;
  if (wildcardCovers(r, l)) return l;
  return undefined;
}

/**
 * The hostnames a route serves on a listener: the intersections of its hostnames with the
 * listener's (the listener's own when the route names none; none at all — any host — when neither
 * does), without repeats; `[]` when the route names hostnames and none intersects. Pure.
 */
export function routeHostnamesOn(
  listener: string | undefined,
  route: readonly string[] | undefined,
): { readonly anyHost: true } | { readonly anyHost: false; readonly hosts: string[] } {
  if (route === undefined || route.length === 0)
    return listener === undefined ? { anyHost: true } : { anyHost: false, hosts: [listener.toLowerCase()] };
  const hosts = new Set<string>();
  for (const r of route) {
    const h = intersectHostname(listener, r);
    if (h !== undefined) hosts.add(h);
  }
  return { anyHost: false, hosts: [...hosts] };
}

/**
 * How specific a hostname is, as a number that sorts higher for more specific names: a name
 * without a wildcard above every wildcard, then by length; `undefined` (any host) lowest. Fits in
 * 10 bits (a hostname has at most 253 characters). Pure.
 */
export function hostnameSpecificity(name: string | undefined): number {
  if (name === undefined) return 0;
  return (isWildcard(name) ? 0 : 512) + Math.min(name.length, 253) + 1;
}
