// How an Application Load Balancer picks an action for a request: listener rules by priority, the
// default rule last, every condition of a rule must match, the values of one condition are ORed.
// Pure; docs/development.md ("The ALB data plane") has the sources for each behaviour.
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type {
  Action as SdkAction,
  Rule as SdkRule,
  RuleCondition,
} from '@aws-sdk/client-elastic-load-balancing-v2';

/** One condition of a listener rule, as the data plane evaluates it. */
export type Condition =
  /** Host header without its port; case-insensitive; `*` and `?` wildcards. */
  | { readonly field: 'host-header'; readonly values: readonly string[] }
  /** The URL's path (never its query); case-sensitive; `*` and `?` wildcards. */
  | { readonly field: 'path-pattern'; readonly values: readonly string[] }
  /** A header by name (case-insensitive); values case-insensitive with wildcards; any occurrence may match. */
  | { readonly field: 'http-header'; readonly name: string; readonly values: readonly string[] }
  /** Pairs of the raw query string; key optional (any key); case-insensitive with wildcards (`\*`, `\?` literal). */
  | {
      readonly field: 'query-string';
      readonly values: readonly { readonly key?: string; readonly value: string }[];
    }
  /** The request method, exact and case-sensitive. */
  | { readonly field: 'http-request-method'; readonly values: readonly string[] }
  /** The client's address (the connection's peer, never X-Forwarded-For) in one of these CIDR blocks. */
  | { readonly field: 'source-ip'; readonly values: readonly string[] };

/** One target group of a forward action and its weight (0 gets no traffic). */
export interface WeightedTargetGroup {
  readonly arn: string;
  readonly weight: number;
}

/** The terminal action of a rule. */
export type Action =
  | { readonly type: 'forward'; readonly targetGroups: readonly WeightedTargetGroup[] }
  | {
      readonly type: 'redirect';
      readonly statusCode: 301 | 302;
      /** Each component may hold `#{…}` placeholders; unset ones keep the request's value. */
      readonly protocol?: string;
      readonly host?: string;
      readonly port?: string;
      readonly path?: string;
      readonly query?: string;
    }
  | {
      readonly type: 'fixed-response';
      readonly statusCode: number;
      readonly contentType?: string;
      readonly body?: string;
    };

/** A listener rule: `priority` is undefined for the default rule, which always matches. */
export interface ListenerRule {
  readonly arn: string;
  readonly priority: number | undefined;
  readonly conditions: readonly Condition[];
  readonly action: Action;
}

/** What rules look at in a request. */
export interface RequestFacts {
  readonly method: string;
  /** The Host header as sent (a port suffix is ignored when matching). */
  readonly host: string;
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly query: string;
  /** Header names in lower case, as node's IncomingMessage gives them. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly sourceIp: string;
}

/**
 * Whether `value` matches an ALB wildcard pattern: `*` any run of characters (also empty), `?`
 * exactly one, everything else literal; the whole value must match. With `escapes` (query string
 * conditions: AWS's QueryStringConditionConfig) `\*` and `\?` are a literal `*` and `?`. Pure.
 */
export function wildcardMatch(
  pattern: string,
  value: string,
  caseInsensitive: boolean,
  escapes = false,
): boolean {
  let re = '^';
  let escaped = false;
  for (const ch of pattern) {
    if (escapes && !escaped && ch === '\\') {
      escaped = true;
      continue;
    }
    if (ch === '*' && !escaped) re += '[\\s\\S]*';
    else if (ch === '?' && !escaped) re += '[\\s\\S]';
    else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    escaped = false;
  }
  if (escaped) re += '\\\\';
  return new RegExp(`${re}$`, caseInsensitive ? 'i' : '').test(value);
}

/** The host name of a Host header value: without a `:port` suffix, brackets of an IPv6 literal kept. Pure. */
export function hostWithoutPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1) || host;
  const colon = host.lastIndexOf(':');
  return colon >= 0 && /^\d*$/.test(host.slice(colon + 1)) ? host.slice(0, colon) : host;
}

/** Whether `ip` lies in one of the CIDR blocks (IPv4 or IPv6; `::ffff:a.b.c.d` counts as IPv4). Pure. */
export function inCidrs(ip: string, cidrs: readonly string[]): boolean {
  const addr = ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const family = isIPv4(addr) ? 'ipv4' : isIPv6(addr) ? 'ipv6' : undefined;
  if (family === undefined) return false;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net = '', bits] = cidr.split('/');
    const netFamily = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
    if (netFamily === undefined) continue;
    list.addSubnet(net, Number(bits ?? (netFamily === 'ipv4' ? 32 : 128)), netFamily);
  }
  return list.check(addr, family);
}

function queryPairs(query: string): { key: string; value: string }[] {
  if (query === '') return [];
  return query.split('&').map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? { key: part, value: '' } : { key: part.slice(0, eq), value: part.slice(eq + 1) };
  });
}

/** Whether one condition holds for a request. Pure. */
export function conditionMatches(c: Condition, req: RequestFacts): boolean {
  switch (c.field) {
    case 'host-header': {
      const host = hostWithoutPort(req.host);
      return c.values.some((v) => wildcardMatch(v, host, true));
    }
    case 'path-pattern':
      return c.values.some((v) => wildcardMatch(v, req.path, false));
    case 'http-header': {
      const raw = req.headers[c.name.toLowerCase()];
      const sent = raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
      return sent.some((s) => c.values.some((v) => wildcardMatch(v, s, true)));
    }
    case 'query-string': {
      const pairs = queryPairs(req.query);
      return c.values.some((v) =>
        pairs.some(
          (p) =>
            (v.key === undefined || wildcardMatch(v.key, p.key, true, true)) &&
            wildcardMatch(v.value, p.value, true, true),
        ),
      );
    }
    case 'http-request-method':
      return c.values.includes(req.method);
    case 'source-ip':
      return inCidrs(req.sourceIp, c.values);
  }
}

/**
 * The rule that handles a request: rules with a priority in ascending order, the first whose
 * conditions all hold, else the default rule. Undefined only when there is no default rule. Pure.
 */
export function selectRule(rules: readonly ListenerRule[], req: RequestFacts): ListenerRule | undefined {
  const ordered = [...rules].sort(
    (a, b) => (a.priority ?? Number.POSITIVE_INFINITY) - (b.priority ?? Number.POSITIVE_INFINITY),
  );
  return ordered.find((r) => r.priority === undefined || r.conditions.every((c) => conditionMatches(c, req)));
}

/** What a redirect's placeholders stand for in one request. */
export interface RedirectContext {
  /** Listener protocol, `HTTP` or `HTTPS`. */
  readonly protocol: string;
  /** Host name without port. */
  readonly host: string;
  /** The listener's port. */
  readonly port: number;
  /** The request path, with its leading `/`. */
  readonly path: string;
  /** The raw query string without `?`. */
  readonly query: string;
}

/**
 * The Location of a redirect action: each component's `#{protocol}`, `#{host}`, `#{port}`,
 * `#{path}` (without its leading `/`) and `#{query}` replaced from the request; an unset component
 * keeps the request's value. The port is always written (`https://h:443/…`); `?` only with a
 * non-empty query. Pure.
 */
export function renderRedirect(action: Extract<Action, { type: 'redirect' }>, ctx: RedirectContext): string {
  const fill = (template: string): string =>
    template
      .replaceAll('#{protocol}', ctx.protocol.toLowerCase())
      .replaceAll('#{host}', ctx.host)
      .replaceAll('#{port}', String(ctx.port))
      .replaceAll('#{path}', ctx.path.replace(/^\//, ''))
      .replaceAll('#{query}', ctx.query);
  const protocol = fill(action.protocol ?? '#{protocol}').toLowerCase();
  const host = fill(action.host ?? '#{host}');
  const port = fill(action.port ?? '#{port}');
  const path = fill(action.path ?? '/#{path}');
  const query = fill(action.query ?? '#{query}');
  return `${protocol}://${host}:${port}${path}${query === '' ? '' : `?${query}`}`;
}

/**
 * Picks one of `items` with probability proportional to its weight, using `random` in [0,1).
 * Undefined when every weight is 0 (or there are none). Pure given `random`.
 */
export function chooseWeighted<T extends { readonly weight: number }>(
  items: readonly T[],
  random: () => number,
): T | undefined {
  const total = items.reduce((sum, i) => sum + Math.max(0, i.weight), 0);
  if (total <= 0) return undefined;
  let r = random() * total;
  for (const item of items) {
    const w = Math.max(0, item.weight);
    if (w === 0) continue;
    if (r < w) return item;
    r -= w;
  }
  return items.filter((i) => i.weight > 0).at(-1);
}

function conditionOf(c: RuleCondition): Condition | undefined {
  switch (c.Field) {
    case 'host-header':
      return { field: 'host-header', values: c.HostHeaderConfig?.Values ?? c.Values ?? [] };
    case 'path-pattern':
      return { field: 'path-pattern', values: c.PathPatternConfig?.Values ?? c.Values ?? [] };
    case 'http-header':
      return {
        field: 'http-header',
        name: c.HttpHeaderConfig?.HttpHeaderName ?? '',
        values: c.HttpHeaderConfig?.Values ?? [],
      };
    case 'query-string':
      return {
        field: 'query-string',
        values: (c.QueryStringConfig?.Values ?? []).map((kv) => ({
          ...(kv.Key !== undefined ? { key: kv.Key } : {}),
          value: kv.Value ?? '',
        })),
      };
    case 'http-request-method':
      return { field: 'http-request-method', values: c.HttpRequestMethodConfig?.Values ?? [] };
    case 'source-ip':
      return { field: 'source-ip', values: c.SourceIpConfig?.Values ?? [] };
    default:
      return undefined;
  }
}

/** The terminal action among a rule's actions (the one with the highest Order). Pure. */
export function actionOf(actions: readonly SdkAction[]): Action | undefined {
  const last = [...actions].sort((a, b) => (a.Order ?? 0) - (b.Order ?? 0)).at(-1);
  switch (last?.Type) {
    case 'forward': {
      const groups = last.ForwardConfig?.TargetGroups ?? [];
      if (groups.length > 0)
        return {
          type: 'forward',
          targetGroups: groups.map((g) => ({ arn: g.TargetGroupArn ?? '', weight: g.Weight ?? 1 })),
        };
      return { type: 'forward', targetGroups: [{ arn: last.TargetGroupArn ?? '', weight: 1 }] };
    }
    case 'redirect': {
      const r = last.RedirectConfig;
      return {
        type: 'redirect',
        statusCode: r?.StatusCode === 'HTTP_301' ? 301 : 302,
        ...(r?.Protocol !== undefined ? { protocol: r.Protocol } : {}),
        ...(r?.Host !== undefined ? { host: r.Host } : {}),
        ...(r?.Port !== undefined ? { port: r.Port } : {}),
        ...(r?.Path !== undefined ? { path: r.Path } : {}),
        ...(r?.Query !== undefined ? { query: r.Query } : {}),
      };
    }
    case 'fixed-response': {
      const f = last.FixedResponseConfig;
      return {
        type: 'fixed-response',
        statusCode: Number(f?.StatusCode ?? 200),
        ...(f?.ContentType !== undefined ? { contentType: f.ContentType } : {}),
        ...(f?.MessageBody !== undefined ? { body: f.MessageBody } : {}),
      };
    }
    default:
      return undefined;
  }
}

/**
 * A DescribeRules answer's rule in the data plane's terms; undefined when it has a condition or
 * action the data plane does not model (such a rule is skipped, and logged by the caller). Pure.
 */
export function ruleOf(r: SdkRule): ListenerRule | undefined {
  const action = actionOf(r.Actions ?? []);
  if (action === undefined) return undefined;
  const conditions: Condition[] = [];
  for (const c of r.Conditions ?? []) {
    const cond = conditionOf(c);
    if (cond === undefined) return undefined;
    conditions.push(cond);
  }
  const isDefault = r.IsDefault === true || r.Priority === 'default';
  return { arn: r.RuleArn ?? '', priority: isDefault ? undefined : Number(r.Priority), conditions, action };
}
