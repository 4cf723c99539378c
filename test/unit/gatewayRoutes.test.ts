// An HTTPRoute or GRPCRoute as MyIngress rules (src/kinds/myingress/gateway/routes.ts): header,
// query and method matches (gRPC: service and method as a path) become ALB conditions, several
// backendRefs a weighted forward (gRPC: to GRPC target groups), and what an ALB cannot express is
// refused with UnsupportedValue naming the field.
import { describe, expect, it } from 'vitest';
import type {
  GRPCRoute,
  GRPCRouteMatch,
  HTTPBackendRef,
  HTTPRoute,
  HTTPRouteMatch,
  ReferenceGrant,
} from '../../src/apis/gatewayApi.ts';
import {
  albMatch,
  albQueryLiteral,
  grpcMatchRank,
  grpcPaths,
  grpcRouteOnGateway,
  matchRank,
  memberName,
  routeOnGateway,
  type RouteService,
  type RouteWorld,
} from '../../src/kinds/myingress/gateway/routes.ts';
import type { ListenerVerdict } from '../../src/kinds/myingress/gateway/listeners.ts';

const ok = { status: 'True', reason: 'Accepted', message: '' } as const;
const listener: ListenerVerdict = {
  listener: { name: 'http', port: 80, protocol: 'HTTP' },
  accepted: ok,
  resolvedRefs: ok,
  conflicted: { status: 'False', reason: 'NoConflicts', message: '' },
  supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
  attachable: true,
  usable: true,
};

const services = new Set(['a', 'b', 'c', 'd', 'e', 'f']);
const world: RouteWorld = {
  gateway: {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { namespace: 'ns', name: 'gw' },
    spec: { gatewayClassName: 'skylift', listeners: [listener.listener] },
  },
  listeners: [listener],
  groupName: 'gw-group',
  namespaceLabels: () => ({}),
  service: (_ns, name): RouteService | undefined =>
    services.has(name)
      ? { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } }
      : undefined,
  grants: () => [],
};

function route(
  matches: HTTPRouteMatch[],
  backendRefs: HTTPBackendRef[] = [{ name: 'a', port: 80 }],
): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'ns', name: 'r', uid: 'u1' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: ['shop.example.com'],
      rules: [{ matches, backendRefs }],
    },
  };
}

describe('HTTPRoute matches as ALB conditions', () => {
  it('maps headers, query params and the method of a match', () => {
    const r = routeOnGateway(
      route([
        {
          path: { type: 'Exact', value: '/api' },
          headers: [{ name: 'X-Canary', value: 'on' }],
          queryParams: [{ name: 'v', value: '2' }],
          method: 'POST',
        },
      ]),
      world,
    );
    expect(r.parents[0]?.accepted.status).toBe('True');
    expect(r.member?.spec.rules).toEqual([
      {
        priority: 1,
        listenerPort: 80,
        hosts: ['shop.example.com'],
        paths: ['/api'],
        headers: [{ name: 'X-Canary', values: ['on'] }],
        queryStrings: [{ key: 'v', value: '2' }],
        methods: ['POST'],
        action: { forward: { service: { name: 'a', port: 80 } } },
      },
    ]);
  });

  it.each([
    {
      reason: 'a PathPrefix’s two patterns fit beside a host, a method and a header',
      m: { path: { type: 'PathPrefix', value: '/a' }, method: 'GET', headers: [{ name: 'x', value: '1' }] },
      paths: [['/a', '/a/*']],
    },
    {
      reason: 'over 5 values, a PathPrefix goes to two rules, one pattern each',
      m: {
        path: { type: 'PathPrefix', value: '/a' },
        method: 'GET',
        headers: [
          { name: 'x', value: '1' },
          { name: 'y', value: '2' },
        ],
      },
      paths: [['/a'], ['/a/*']],
    },
  ] satisfies { reason: string; m: HTTPRouteMatch; paths: string[][] }[])('$reason', ({ m, paths }) => {
    const r = routeOnGateway(route([m]), world);
    const rules = r.member?.spec.rules ?? [];
    expect(rules.map((x) => x.paths)).toEqual(paths);
    // Both halves of a split keep the match's rank and conditions.
    expect(new Set(rules.map((x) => r.ranks.get(x))).size).toBe(1);
    expect(new Set(rules.map((x) => JSON.stringify([x.headers, x.methods]))).size).toBe(1);
  });

  it('takes the first of headers with one name (case-insensitive) and of query params (exact)', () => {
    expect(
      albMatch({
        headers: [
          { name: 'X-A', value: '1' },
          { name: 'x-a', value: '2' },
        ],
        queryParams: [
          { name: 'q', value: '1' },
          { name: 'q', value: '2' },
          { name: 'Q', value: '3' },
        ],
      }),
    ).toEqual({
      headers: [{ name: 'X-A', values: ['1'] }],
      queryStrings: [
        { key: 'q', value: '1' },
        { key: 'Q', value: '3' },
      ],
    });
  });

  it('escapes * and ? of a query param, which an ALB would read as wildcards', () => {
    expect(albQueryLiteral('a*b?')).toBe('a\\*b\\?');
    expect(albMatch({ queryParams: [{ name: 'k*', value: '?' }] }).queryStrings).toEqual([
      { key: 'k\\*', value: '\\?' },
    ]);
  });

  it.each([
    {
      reason: 'a RegularExpression header match',
      m: { headers: [{ type: 'RegularExpression', name: 'x', value: '.*' }] },
      field: 'spec.rules[0].matches[0].headers[0]',
    },
    {
      reason: 'a header value with a literal *',
      m: { headers: [{ name: 'x', value: 'a*' }] },
      field: 'spec.rules[0].matches[0].headers[0].value',
    },
    {
      reason: 'a header value with a literal ?',
      m: { headers: [{ name: 'x', value: 'a?' }] },
      field: 'spec.rules[0].matches[0].headers[0].value',
    },
    {
      reason: 'a header name over 40 characters',
      m: { headers: [{ name: 'x'.repeat(41), value: '1' }] },
      field: 'spec.rules[0].matches[0].headers[0].name',
    },
    {
      reason: 'a RegularExpression query param',
      m: { queryParams: [{ type: 'RegularExpression', name: 'q', value: '.*' }] },
      field: 'spec.rules[0].matches[0].queryParams[0]',
    },
    {
      reason: 'a query param with a backslash',
      m: { queryParams: [{ name: 'q', value: 'a\\b' }] },
      field: 'spec.rules[0].matches[0].queryParams[0]',
    },
    {
      reason: 'more condition values than an ALB rule takes, even split',
      m: {
        method: 'GET',
        headers: [
          { name: 'x', value: '1' },
          { name: 'y', value: '2' },
          { name: 'z', value: '3' },
        ],
      },
      field: 'spec.rules[0].matches[0]: a hostname, a path, the method, 3 headers and 0 queryParams make 6',
    },
  ] satisfies { reason: string; m: HTTPRouteMatch; field: string }[])('refuses $reason', ({ m, field }) => {
    const r = routeOnGateway(route([m]), world);
    expect(r.member).toBeUndefined();
    expect(r.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(r.parents[0]?.accepted.message).toContain(field);
  });
});

describe('HTTPRoute backendRefs as a forward', () => {
  const actionOf = (refs: HTTPBackendRef[]): unknown =>
    routeOnGateway(route([{}], refs), world).member?.spec.rules?.[0]?.action;

  it.each([
    {
      reason: 'one backend: forward.service',
      refs: [{ name: 'a', port: 80 }],
      want: { forward: { service: { name: 'a', port: 80 } } },
    },
    {
      reason: 'two backends, weights default 1',
      refs: [
        { name: 'a', port: 80 },
        { name: 'b', port: 80 },
      ],
      want: {
        forward: {
          services: [
            { name: 'a', port: 80, weight: 1 },
            { name: 'b', port: 80, weight: 1 },
          ],
        },
      },
    },
    {
      reason: 'a weight 0 backend gets no target group',
      refs: [
        { name: 'a', port: 80, weight: 3 },
        { name: 'b', port: 80, weight: 0 },
      ],
      want: { forward: { service: { name: 'a', port: 80 } } },
    },
    {
      reason: 'every weight 0: 500',
      refs: [
        { name: 'a', port: 80, weight: 0 },
        { name: 'b', port: 80, weight: 0 },
      ],
      want: { fixedResponse: { statusCode: 500 } },
    },
    {
      reason: 'an unresolved backend among resolved ones is left out',
      refs: [
        { name: 'a', port: 80, weight: 3 },
        { name: 'missing', port: 80, weight: 1 },
        { name: 'b', port: 80, weight: 1 },
      ],
      want: {
        forward: {
          services: [
            { name: 'a', port: 80, weight: 3 },
            { name: 'b', port: 80, weight: 1 },
          ],
        },
      },
    },
    {
      reason: 'only unresolved backends: 500',
      refs: [{ name: 'missing', port: 80 }],
      want: { fixedResponse: { statusCode: 500 } },
    },
    {
      reason: 'two refs to one Service port add up',
      refs: [
        { name: 'a', port: 80, weight: 1 },
        { name: 'b', port: 80, weight: 1 },
        { name: 'a', port: 80, weight: 2 },
      ],
      want: {
        forward: {
          services: [
            { name: 'a', port: 80, weight: 3 },
            { name: 'b', port: 80, weight: 1 },
          ],
        },
      },
    },
    {
      reason: 'weights above 999 scaled down, a positive weight kept at least 1',
      refs: [
        { name: 'a', port: 80, weight: 1_000_000 },
        { name: 'b', port: 80, weight: 10 },
      ],
      want: {
        forward: {
          services: [
            { name: 'a', port: 80, weight: 999 },
            { name: 'b', port: 80, weight: 1 },
          ],
        },
      },
    },
  ] satisfies { reason: string; refs: HTTPBackendRef[]; want: unknown }[])('$reason', ({ refs, want }) => {
    expect(actionOf(refs)).toEqual(want);
  });

  it('says an unresolved backend among several in ResolvedRefs', () => {
    const r = routeOnGateway(
      route(
        [{}],
        [
          { name: 'a', port: 80 },
          { name: 'missing', port: 80 },
        ],
      ),
      world,
    );
    expect(r.parents[0]?.resolvedRefs).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
  });

  it('refuses more than 5 backends (an ALB forward’s target groups)', () => {
    const r = routeOnGateway(
      route(
        [{}],
        ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ name, port: 80 })),
      ),
      world,
    );
    expect(r.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(r.parents[0]?.accepted.message).toContain('spec.rules[0].backendRefs');
  });
});

describe('matchRank', () => {
  it.each([
    {
      reason: 'a method before none',
      hi: { method: 'GET' },
      lo: {},
    },
    {
      reason: 'more headers before fewer',
      hi: {
        headers: [
          { name: 'a', value: '1' },
          { name: 'b', value: '1' },
        ],
      },
      lo: { headers: [{ name: 'a', value: '1' }], queryParams: [{ name: 'q', value: '1' }] },
    },
    {
      reason: 'headers counted as served: a repeated name counts once',
      hi: { headers: [{ name: 'a', value: '1' }], queryParams: [{ name: 'q', value: '1' }] },
      lo: {
        headers: [
          { name: 'a', value: '1' },
          { name: 'A', value: '2' },
        ],
      },
    },
    {
      reason: 'more query params before fewer',
      hi: { queryParams: [{ name: 'q', value: '1' }] },
      lo: {},
    },
    {
      reason: 'the longer path before a method',
      hi: { path: { value: '/longer' } },
      lo: { path: { value: '/l' }, method: 'GET' },
    },
  ] satisfies { reason: string; hi: HTTPRouteMatch; lo: HTTPRouteMatch }[])('$reason', ({ hi, lo }) => {
    expect(matchRank('shop.example.com', hi)).toBeGreaterThan(matchRank('shop.example.com', lo));
  });
});

describe('GRPCRoute as ALB rules', () => {
  const https: ListenerVerdict = {
    ...listener,
    listener: { name: 'https', port: 443, protocol: 'HTTPS' },
    supportedKinds: [
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
      { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
    ],
  };
  const grpcWorld: RouteWorld = {
    ...world,
    gateway: {
      ...world.gateway,
      spec: { gatewayClassName: 'skylift', listeners: [listener.listener, https.listener] },
    },
    listeners: [listener, https],
  };
  function grpcRoute(
    matches: GRPCRouteMatch[],
    backendRefs: HTTPBackendRef[] = [{ name: 'a', port: 80 }],
    more: Partial<GRPCRoute['spec']> = {},
  ): GRPCRoute {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GRPCRoute',
      metadata: { namespace: 'ns', name: 'r', uid: 'g1' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: ['grpc.example.com'],
        rules: [{ matches, backendRefs }],
        ...more,
      },
    };
  }

  it('attaches to the HTTPS listener only, its member named apart from an HTTPRoute of the same name', () => {
    const r = grpcRouteOnGateway(grpcRoute([{ method: { service: 'echo.Echo', method: 'Say' } }]), grpcWorld);
    expect(r.parents[0]?.accepted.status).toBe('True');
    expect(r.parents[0]?.listeners).toEqual(['https']);
    expect(r.member?.metadata.name).toBe(memberName('GRPCRoute', 'r'));
    expect(r.member?.metadata.name).not.toBe('r');
    expect(r.member?.spec.rules).toEqual([
      {
        priority: 1,
        listenerPort: 443,
        hosts: ['grpc.example.com'],
        paths: ['/echo.Echo/Say'],
        action: { forward: { service: { name: 'a', port: 80, protocolVersion: 'GRPC' } } },
      },
    ]);
  });

  it('a weighted split: every backend a GRPC target group', () => {
    const r = grpcRouteOnGateway(
      grpcRoute(
        [{ method: { service: 'echo.Echo' }, headers: [{ name: 'x-team', value: 'blue' }] }],
        [
          { name: 'a', port: 80, weight: 3 },
          { name: 'b', port: 80, weight: 1 },
        ],
      ),
      grpcWorld,
    );
    expect(r.member?.spec.rules?.[0]).toMatchObject({
      paths: ['/echo.Echo/*'],
      headers: [{ name: 'x-team', values: ['blue'] }],
      action: {
        forward: {
          services: [
            { name: 'a', port: 80, weight: 3, protocolVersion: 'GRPC' },
            { name: 'b', port: 80, weight: 1, protocolVersion: 'GRPC' },
          ],
        },
      },
    });
  });

  it.each([
    { reason: 'service and method', m: { method: { service: 's.S', method: 'M' } }, want: ['/s.S/M'] },
    { reason: 'a service alone', m: { method: { service: 's.S' } }, want: ['/s.S/*'] },
    { reason: 'a method alone', m: { method: { method: 'M' } }, want: ['/*/M'] },
    { reason: 'no method match', m: {}, want: ['/*'] },
  ] satisfies { reason: string; m: GRPCRouteMatch; want: string[] }[])('path of $reason', ({ m, want }) => {
    expect(grpcPaths(m)).toEqual(want);
  });

  it.each([
    {
      reason: 'a RegularExpression method match',
      m: { method: { type: 'RegularExpression', service: 'echo\\..*' } },
      field: 'spec.rules[0].matches[0].method.type: RegularExpression',
    },
    {
      reason: 'a RegularExpression header match',
      m: { headers: [{ type: 'RegularExpression', name: 'x', value: 'a.*' }] },
      field: 'spec.rules[0].matches[0].headers[0]',
    },
    {
      reason: 'more condition values than an ALB rule takes',
      m: {
        headers: ['a', 'b', 'c', 'd'].map((name) => ({ name, value: '1' })),
      },
      field: 'spec.rules[0].matches[0]: a hostname, a path, 4 headers make 6',
    },
  ] satisfies { reason: string; m: GRPCRouteMatch; field: string }[])('refuses $reason', ({ m, field }) => {
    const r = grpcRouteOnGateway(grpcRoute([m]), grpcWorld);
    expect(r.member).toBeUndefined();
    expect(r.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(r.parents[0]?.accepted.message).toContain(field);
  });

  it('refuses any filter, naming the field', () => {
    const route = grpcRoute([{}]);
    const rule = route.spec.rules?.[0];
    if (rule !== undefined) rule.filters = [{ type: 'RequestHeaderModifier' }];
    const r = grpcRouteOnGateway(route, grpcWorld);
    expect(r.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(r.parents[0]?.accepted.message).toContain('spec.rules[0].filters: RequestHeaderModifier');
  });

  it('naming an HTTP listener is NotAllowedByListeners', () => {
    const route = grpcRoute([{}], undefined, { parentRefs: [{ name: 'gw', sectionName: 'http' }] });
    const r = grpcRouteOnGateway(route, grpcWorld);
    expect(r.member).toBeUndefined();
    expect(r.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
  });

  it('another namespace’s Service needs a ReferenceGrant from GRPCRoutes', () => {
    const grant = (kind: string): ReferenceGrant => ({
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { namespace: 'other', name: 'g' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind, namespace: 'ns' }],
        to: [{ group: '', kind: 'Service' }],
      },
    });
    const route = grpcRoute([{}], [{ name: 'a', namespace: 'other', port: 80 }]);
    const byHttp = grpcRouteOnGateway(route, { ...grpcWorld, grants: () => [grant('HTTPRoute')] });
    expect(byHttp.parents[0]?.resolvedRefs).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    const byGrpc = grpcRouteOnGateway(route, { ...grpcWorld, grants: () => [grant('GRPCRoute')] });
    expect(byGrpc.parents[0]?.resolvedRefs.status).toBe('True');
    expect(byGrpc.member?.spec.rules?.[0]?.action).toEqual({
      forward: { service: { name: 'other/a', port: 80, protocolVersion: 'GRPC' } },
    });
  });

  it('an HTTPRoute and a GRPCRoute sharing a listener and a hostname: the older is accepted there', () => {
    const at = (t: string) => ({ creationTimestamp: t });
    const grpc = grpcRoute([{}]);
    grpc.metadata = { ...grpc.metadata, ...at('2026-01-02T00:00:00Z') };
    const http = route([{}]);
    http.metadata = { ...http.metadata, ...at('2026-01-01T00:00:00Z') };
    http.spec.hostnames = ['*.example.com'];
    const both = (g: GRPCRoute, h: HTTPRoute): RouteWorld => ({
      ...grpcWorld,
      routes: [
        { kind: 'GRPCRoute', route: g },
        { kind: 'HTTPRoute', route: h },
      ],
    });
    // The older HTTPRoute wins the HTTPS listener: the GRPCRoute, attachable nowhere else, is refused.
    const lost = grpcRouteOnGateway(grpc, both(grpc, http));
    expect(lost.member).toBeUndefined();
    expect(lost.parents[0]?.accepted).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
    expect(lost.parents[0]?.accepted.message).toContain('an older HTTPRoute');
    expect(routeOnGateway(http, both(grpc, http)).parents[0]?.listeners).toEqual(['http', 'https']);
    // The older GRPCRoute wins it: the HTTPRoute keeps the HTTP listener only.
    const younger = { ...http, metadata: { ...http.metadata, ...at('2026-01-03T00:00:00Z') } };
    expect(routeOnGateway(younger, both(grpc, younger)).parents[0]).toMatchObject({
      accepted: { status: 'True' },
      listeners: ['http'],
    });
    expect(grpcRouteOnGateway(grpc, both(grpc, younger)).parents[0]?.listeners).toEqual(['https']);
    // No hostname in common: both accepted on the HTTPS listener.
    const apart = { ...younger, spec: { ...younger.spec, hostnames: ['shop.example.org'] } };
    expect(routeOnGateway(apart, both(grpc, apart)).parents[0]?.listeners).toEqual(['http', 'https']);
  });

  it.each([
    {
      reason: 'service and method before the service alone',
      hi: { method: { service: 's.S', method: 'M' } },
      lo: { method: { service: 's.S' } },
    },
    {
      reason: 'a service alone before a method alone',
      hi: { method: { service: 's.S' } },
      lo: { method: { method: 'M' } },
    },
    {
      reason: 'a method alone before no match',
      hi: { method: { method: 'M' }, headers: [{ name: 'x', value: '1' }] },
      lo: {},
    },
    {
      reason: 'more headers before fewer',
      hi: { method: { service: 's.S' }, headers: [{ name: 'x', value: '1' }] },
      lo: { method: { service: 's.S' } },
    },
  ] satisfies { reason: string; hi: GRPCRouteMatch; lo: GRPCRouteMatch }[])(
    'grpcMatchRank: $reason',
    ({ hi, lo }) => {
      expect(grpcMatchRank('grpc.example.com', hi)).toBeGreaterThan(grpcMatchRank('grpc.example.com', lo));
    },
  );
});
