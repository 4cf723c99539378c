// The Gateway API on ALBs, its pure parts: listener verdicts, hostname intersection, route
// attachment and refusals with the Gateway API's reasons, rule precedence, statuses, the group a
// Gateway makes, and the Gateway controller's flags.
import { describe, expect, it } from 'vitest';
import {
  skyliftGatewayControllerName,
  type Gateway,
  type GatewayListener,
  type HTTPRoute,
  type HTTPRouteRule,
  type ReferenceGrant,
} from '../../src/apis/gatewayApi.ts';
import type { MyIngress } from '../../src/kinds/myingress/api.ts';
import { routeOrder } from '../../src/kinds/myingress/gateway/groupController.ts';
import { contains } from '../../src/kinds/myingress/gateway/gatewayController.ts';
import { intersectHostname, routeHostnamesOn } from '../../src/kinds/myingress/gateway/hostnames.ts';
import { certificateRefAllowed, listenerVerdicts } from '../../src/kinds/myingress/gateway/listeners.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import {
  albPaths,
  matchRank,
  routeOnGateway,
  type RouteWorld,
} from '../../src/kinds/myingress/gateway/routes.ts';
import { parseGatewaySettings } from '../../src/kinds/myingress/gateway/settings.ts';
import {
  defaultGatewayDefaults,
  gatewayGroup,
  gatewayStatus,
  gatewayStatusHolds,
  routeParents,
} from '../../src/kinds/myingress/gateway/status.ts';

const now = new Date('2026-11-27T12:00:00Z');

function gateway(listeners: GatewayListener[], ns = 'infra'): Gateway {
  return {
    metadata: { namespace: ns, name: 'gw', uid: 'gw-uid', generation: 2 },
    spec: { gatewayClassName: 'skylift', listeners },
  };
}

const http = (name: string, extra: Partial<GatewayListener> = {}): GatewayListener => ({
  name,
  port: 80,
  protocol: 'HTTP',
  ...extra,
});

function route(ns: string, spec: HTTPRoute['spec'], name = 'r'): HTTPRoute {
  return {
    metadata: {
      namespace: ns,
      name,
      uid: `${ns}-${name}`,
      generation: 3,
      creationTimestamp: '2026-11-27T10:00:00Z',
    },
    spec,
  };
}

function world(gw: Gateway, opts: Partial<RouteWorld> = {}): RouteWorld {
  return {
    gateway: gw,
    listeners: listenerVerdicts(gw),
    groupName: gatewayGroupName('infra', 'gw'),
    namespaceLabels: () => ({}),
    service: (_ns, name) =>
      name === 'web' ? { metadata: { name }, spec: { ports: [{ port: 80 }] } } : undefined,
    grants: () => [],
    ...opts,
  };
}

const toWeb = { backendRefs: [{ name: 'web', port: 80 }] };

describe('listeners', () => {
  it('serves HTTP, refuses other protocols by name, and marks listeners sharing a port and hostname Conflicted', () => {
    const v = listenerVerdicts(
      gateway([
        http('a'),
        http('b'),
        http('c', { hostname: 'c.example.com' }),
        { name: 'tls', port: 443, protocol: 'HTTPS' },
        { name: 'tcp', port: 80, protocol: 'TCP' },
      ]),
    );
    expect(v.map((l) => [l.listener.name, l.usable, l.accepted.reason, l.conflicted.reason])).toEqual([
      ['a', false, 'Accepted', 'ProtocolConflict'],
      ['b', false, 'Accepted', 'ProtocolConflict'],
      ['c', false, 'Accepted', 'ProtocolConflict'],
      ['tls', false, 'Accepted', 'NoConflicts'],
      ['tcp', false, 'UnsupportedProtocol', 'ProtocolConflict'],
    ]);
    const two = listenerVerdicts(gateway([http('a'), http('b'), http('c', { hostname: 'c.example.com' })]));
    expect(two.map((l) => [l.listener.name, l.conflicted.reason, l.usable])).toEqual([
      ['a', 'HostnameConflict', false],
      ['b', 'HostnameConflict', false],
      ['c', 'NoConflicts', true],
    ]);
  });

  it('terminates HTTPS with certificateRefs that resolve, and says which reference does not', () => {
    const ref = (name: string, extra: object = {}) => ({ name, ...extra });
    const gw = gateway([
      { name: 'ok', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [ref('good')] } },
      { name: 'none', port: 444, protocol: 'HTTPS' },
      { name: 'bad', port: 445, protocol: 'HTTPS', tls: { certificateRefs: [ref('broken')] } },
      {
        name: 'pass',
        port: 446,
        protocol: 'HTTPS',
        tls: { mode: 'Passthrough', certificateRefs: [ref('good')] },
      },
    ]);
    const v = listenerVerdicts(gw, (r) =>
      r.name === 'good'
        ? { ok: true }
        : { ok: false, reason: 'InvalidCertificateRef', message: 'tls.key: no key' },
    );
    expect(v.map((l) => [l.listener.name, l.usable, l.accepted.reason, l.resolvedRefs.reason])).toEqual([
      ['ok', true, 'Accepted', 'ResolvedRefs'],
      ['none', false, 'Accepted', 'InvalidCertificateRef'],
      ['bad', false, 'Accepted', 'InvalidCertificateRef'],
      ['pass', false, 'UnsupportedValue', 'ResolvedRefs'],
    ]);
    // The group gets one HTTPS listener with the Secret (in the Gateway's namespace).
    expect(gatewayGroup(gw, v, defaultGatewayDefaults)?.spec.listeners).toEqual([
      {
        port: 443,
        protocol: 'HTTPS',
        certificateRefs: [{ namespace: 'infra', name: 'good' }],
        defaultAction: { fixedResponse: { statusCode: 404 } },
      },
    ]);
  });

  it('allows a certificate of another namespace only with a ReferenceGrant from Gateways of this one', () => {
    const grant = (fromNs: string): ReferenceGrant => ({
      metadata: { namespace: 'certs', name: 'g' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: fromNs }],
        to: [{ group: '', kind: 'Secret', name: 'wild' }],
      },
    });
    const ref = { name: 'wild', namespace: 'certs' };
    expect(certificateRefAllowed(ref, 'infra', () => [])).toMatchObject({
      ok: false,
      reason: 'RefNotPermitted',
    });
    expect(certificateRefAllowed(ref, 'infra', () => [grant('elsewhere')])).toMatchObject({ ok: false });
    expect(certificateRefAllowed(ref, 'infra', () => [grant('infra')])).toEqual({ ok: true });
    expect(certificateRefAllowed({ name: 'x', kind: 'ConfigMap' }, 'infra', () => [])).toMatchObject({
      reason: 'InvalidCertificateRef',
    });
  });

  it('lists no supported kind on a listener of a protocol it does not serve', () => {
    const [tcp, web] = listenerVerdicts(gateway([{ name: 'tcp', port: 9000, protocol: 'TCP' }, http('web')]));
    expect(tcp?.supportedKinds).toEqual([]);
    expect(web?.supportedKinds).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
  });

  it('keeps a route’s entry as it was while the load balancer does not carry its rules yet', () => {
    const r = route('infra', { parentRefs: [{ name: 'gw' }, { name: 'other' }] });
    const ok = { status: 'True' as const, reason: 'Accepted', message: '' };
    const old = routeParents(r, [{ parentRef: { name: 'gw' }, accepted: ok, resolvedRefs: ok }], now);
    r.status = { parents: old };
    const held = routeParents(
      { ...r, metadata: { ...r.metadata, generation: 4 } },
      [
        { parentRef: { name: 'gw' }, accepted: ok, resolvedRefs: ok, hold: true },
        { parentRef: { name: 'other' }, accepted: ok, resolvedRefs: ok, hold: true },
      ],
      now,
    );
    expect(held).toEqual(old);
  });

  it('lists GRPCRoute on HTTPS listeners only (an ALB serves gRPC over TLS); GRPCRoute named on HTTP is InvalidRouteKinds', () => {
    const tls = { certificateRefs: [{ name: 'cert' }] };
    const [plain, secure, named] = listenerVerdicts(
      gateway([
        http('plain', { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'GRPCRoute' }] } }),
        { name: 'secure', port: 443, protocol: 'HTTPS', tls },
        {
          name: 'named',
          port: 8443,
          protocol: 'HTTPS',
          tls,
          allowedRoutes: { kinds: [{ kind: 'GRPCRoute' }] },
        },
      ]),
    );
    const g = 'gateway.networking.k8s.io';
    expect(plain?.supportedKinds).toEqual([{ group: g, kind: 'HTTPRoute' }]);
    expect(plain?.resolvedRefs).toMatchObject({ status: 'False', reason: 'InvalidRouteKinds' });
    expect(plain?.resolvedRefs.message).toContain('gateway.networking.k8s.io/GRPCRoute');
    expect(secure?.supportedKinds).toEqual([
      { group: g, kind: 'HTTPRoute' },
      { group: g, kind: 'GRPCRoute' },
    ]);
    expect(named?.supportedKinds).toEqual([{ group: g, kind: 'GRPCRoute' }]);
    expect(named?.resolvedRefs.status).toBe('True');
  });

  it('refuses route kinds other than HTTPRoute (ResolvedRefs InvalidRouteKinds)', () => {
    const [v] = listenerVerdicts(gateway([http('a', { allowedRoutes: { kinds: [{ kind: 'TCPRoute' }] } })]));
    expect(v?.resolvedRefs.reason).toBe('InvalidRouteKinds');
    expect(v?.supportedKinds).toEqual([]);
    expect(v?.usable).toBe(false);
  });
});

describe('hostnames', () => {
  it('intersects as the Gateway API says: the more specific name, wildcards as suffixes of at least one label', () => {
    expect(intersectHostname(undefined, 'a.example.com')).toBe('a.example.com');
    expect(intersectHostname('*.example.com', 'a.b.example.com')).toBe('a.b.example.com');
    expect(intersectHostname('a.example.com', '*.example.com')).toBe('a.example.com');
    expect(intersectHostname('*.example.com', '*.b.example.com')).toBe('*.b.example.com');
    expect(intersectHostname('*.example.com', 'example.com')).toBeUndefined();
    expect(intersectHostname('a.example.com', 'b.example.com')).toBeUndefined();
    expect(routeHostnamesOn(undefined, undefined)).toEqual({ anyHost: true });
    expect(routeHostnamesOn('L.example.com', [])).toEqual({ anyHost: false, hosts: ['l.example.com'] });
  });
});

describe('a route on a Gateway', () => {
  it('attaches by sectionName and port, and says why not otherwise', () => {
    const gw = gateway([http('web'), http('other', { port: 8080, hostname: 'only.example.com' })]);
    const on = routeOnGateway(
      route('infra', {
        parentRefs: [
          { name: 'gw', sectionName: 'web' },
          { name: 'gw', sectionName: 'nope' },
          { name: 'gw', port: 8080 },
        ],
        hostnames: ['x.example.com'],
        rules: [toWeb],
      }),
      world(gw),
    );
    expect(on.parents.map((p) => [p.accepted.reason, p.listeners])).toEqual([
      ['Accepted', ['web']],
      ['NoMatchingParent', []],
      ['NoMatchingListenerHostname', []],
    ]);
    expect(on.member?.spec.rules).toEqual([
      {
        priority: 1,
        listenerPort: 80,
        hosts: ['x.example.com'],
        paths: ['/*'],
        action: { forward: { service: { name: 'web', port: 80 } } },
      },
    ]);
  });

  it('admits namespaces by allowedRoutes (Same by default, Selector by labels)', () => {
    const same = gateway([http('web')]);
    expect(
      routeOnGateway(
        route('team', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [toWeb] }),
        world(same),
      ).parents[0]?.accepted.reason,
    ).toBe('NotAllowedByListeners');
    const sel = gateway([
      http('web', {
        allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { gw: 'yes' } } } },
      }),
    ]);
    const r = route('team', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [toWeb] });
    expect(routeOnGateway(r, world(sel)).parents[0]?.accepted.reason).toBe('NotAllowedByListeners');
    expect(
      routeOnGateway(r, world(sel, { namespaceLabels: () => ({ gw: 'yes' }) })).parents[0]?.accepted.reason,
    ).toBe('Accepted');
  });

  it('refuses what it cannot serve with UnsupportedValue naming the field, and brings no rule', () => {
    const gw = gateway([http('web')]);
    const cases: [HTTPRouteRule, string][] = [
      [{ ...toWeb, filters: [{ type: 'RequestHeaderModifier' }] }, 'spec.rules[0].filters'],
      [
        { ...toWeb, matches: [{ path: { type: 'RegularExpression', value: '/a.*' } }] },
        'spec.rules[0].matches[0].path',
      ],
      [
        { ...toWeb, matches: [{ path: { type: 'PathPrefix', value: '/a*' } }] },
        'spec.rules[0].matches[0].path',
      ],
    ];
    for (const [rule, field] of cases) {
      const on = routeOnGateway(route('infra', { parentRefs: [{ name: 'gw' }], rules: [rule] }), world(gw));
      expect(on.parents[0]?.accepted.reason).toBe('UnsupportedValue');
      expect(on.parents[0]?.accepted.message).toContain(field);
      expect(on.member).toBeUndefined();
    }
  });

  it('answers 500 for a backend that does not resolve, with ResolvedRefs saying why', () => {
    const gw = gateway([http('web')]);
    const cases: [HTTPRoute['spec']['rules'], string][] = [
      [[{ backendRefs: [{ name: 'missing', port: 80 }] }], 'BackendNotFound'],
      [[{ backendRefs: [{ name: 'web', port: 81 }] }], 'BackendNotFound'],
      [[{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'web', port: 80 }] }], 'InvalidKind'],
      [[{ backendRefs: [{ name: 'web', namespace: 'other', port: 80 }] }], 'RefNotPermitted'],
      [[{}], 'ResolvedRefs'],
    ];
    for (const [rules, reason] of cases) {
      const on = routeOnGateway(
        route('infra', { parentRefs: [{ name: 'gw' }], ...(rules !== undefined ? { rules } : {}) }),
        world(gw),
      );
      expect(on.parents[0]?.accepted.reason).toBe('Accepted');
      expect(on.parents[0]?.resolvedRefs.reason).toBe(reason);
      expect(on.member?.spec.rules?.[0]?.action).toEqual({ fixedResponse: { statusCode: 500 } });
    }
  });

  it('takes a ReferenceGrant as permission: the other namespace’s Service is forwarded to as namespace/name', () => {
    const grant: ReferenceGrant = {
      metadata: { namespace: 'other', name: 'g' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }],
        to: [{ group: '', kind: 'Service' }],
      },
    };
    const on = routeOnGateway(
      route('infra', {
        parentRefs: [{ name: 'gw' }],
        rules: [{ backendRefs: [{ name: 'web', namespace: 'other', port: 80 }] }],
      }),
      world(gateway([http('web')]), { grants: (ns) => (ns === 'other' ? [grant] : []) }),
    );
    expect(on.parents[0]?.accepted.reason).toBe('Accepted');
    expect(on.parents[0]?.resolvedRefs.reason).toBe('ResolvedRefs');
    expect(on.member?.spec.rules?.[0]?.action).toEqual({
      forward: { service: { name: 'other/web', port: 80 } },
    });
  });
});

describe('precedence', () => {
  it('orders an exact host before a wildcard, Exact before PathPrefix, the longer prefix first', () => {
    const exactHost = matchRank('a.example.com', {});
    const wildcardHost = matchRank('*.example.com', { path: { type: 'Exact', value: '/very/long/path' } });
    expect(exactHost).toBeGreaterThan(wildcardHost);
    expect(matchRank(undefined, { path: { type: 'Exact', value: '/a' } })).toBeGreaterThan(
      matchRank(undefined, { path: { type: 'PathPrefix', value: '/abc' } }),
    );
    expect(matchRank(undefined, { path: { type: 'PathPrefix', value: '/abc' } })).toBeGreaterThan(
      matchRank(undefined, { path: { type: 'PathPrefix', value: '/ab' } }),
    );
    expect(matchRank(undefined, { path: { type: 'PathPrefix', value: '/ab/' } })).toBe(
      matchRank(undefined, { path: { type: 'PathPrefix', value: '/ab' } }),
    );
  });

  it('maps paths to ALB patterns matching whole segments', () => {
    expect(albPaths({})).toEqual(['/*']);
    expect(albPaths({ path: { type: 'PathPrefix', value: '/api/' } })).toEqual(['/api', '/api/*']);
    expect(albPaths({ path: { type: 'Exact', value: '/api' } })).toEqual(['/api']);
  });

  it('orders routes of equal rank by age, then namespace and name', () => {
    const member = (ns: string, created: string): MyIngress => ({
      metadata: { namespace: ns, name: 'x', creationTimestamp: created },
      spec: {},
    });
    const older = member('b', '2026-11-27T10:00:00Z');
    const newer = member('a', '2026-11-27T11:00:00Z');
    expect([newer, older].sort(routeOrder).map((r) => r.metadata.namespace)).toEqual(['b', 'a']);
    const same = [member('b', '2026-11-27T10:00:00Z'), member('a', '2026-11-27T10:00:00Z')];
    expect(same.sort(routeOrder).map((r) => r.metadata.namespace)).toEqual(['a', 'b']);
  });
});

describe('statuses', () => {
  it('says Accepted ListenersNotValid while one listener is served, Programmed from the load balancer, the DNS name as the address', () => {
    const gw = gateway([http('web'), { name: 'tls', port: 443, protocol: 'TLS' }]);
    const v = listenerVerdicts(gw);
    const s = gatewayStatus(
      gw,
      v,
      { programmed: true, message: '', dnsName: 'lb.example' },
      new Map([['web', 2]]),
      now,
    );
    expect(s.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration])).toEqual([
      ['Accepted', 'True', 'ListenersNotValid', 2],
      ['Programmed', 'True', 'Programmed', 2],
    ]);
    expect(s.addresses).toEqual([{ type: 'Hostname', value: 'lb.example' }]);
    expect(s.listeners.map((l) => [l.name, l.attachedRoutes])).toEqual([
      ['web', 2],
      ['tls', 0],
    ]);
    // Written once: the same status again holds (times aside).
    expect(
      gatewayStatusHolds(
        { ...gw, status: s },
        gatewayStatus(
          { ...gw, status: s },
          v,
          { programmed: true, message: '', dnsName: 'lb.example' },
          new Map([['web', 2]]),
          new Date(now.getTime() + 60_000),
        ),
      ),
    ).toBe(true);
    expect(
      gatewayStatusHolds(
        { ...gw, status: s },
        gatewayStatus(
          gw,
          v,
          { programmed: false, message: 'x', dnsName: 'lb.example' },
          new Map([['web', 2]]),
          now,
        ),
      ),
    ).toBe(false);
  });

  it("keeps other controllers' route parents and replaces only Skylift's", () => {
    const r = route('infra', { parentRefs: [{ name: 'gw' }] });
    r.status = {
      parents: [
        { parentRef: { name: 'other-gw' }, controllerName: 'example.com/other', conditions: [] },
        { parentRef: { name: 'gone' }, controllerName: skyliftGatewayControllerName, conditions: [] },
      ],
    };
    const ok = { status: 'True' as const, reason: 'Accepted', message: '' };
    const parents = routeParents(
      r,
      [{ parentRef: { name: 'gw' }, accepted: ok, resolvedRefs: { ...ok, reason: 'ResolvedRefs' } }],
      now,
    );
    expect(parents.map((p) => [p.controllerName, p.parentRef.name])).toEqual([
      ['example.com/other', 'other-gw'],
      [skyliftGatewayControllerName, 'gw'],
    ]);
  });

  it('makes one group listener per served port, answering 404, named and marked for the Gateway', () => {
    const gw = gateway([
      http('a', { hostname: 'a.example.com' }),
      http('b', { hostname: 'b.example.com' }),
      { name: 'tls', port: 443, protocol: 'HTTPS' },
    ]);
    const g = gatewayGroup(gw, listenerVerdicts(gw), defaultGatewayDefaults);
    expect(g?.metadata).toEqual({
      name: 'gateway.infra.gw',
      labels: { 'skylift.dev/gateway-uid': 'gw-uid' },
      annotations: { 'skylift.dev/gateway': 'infra/gw' },
    });
    expect(g?.spec.listeners).toEqual([
      { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } },
    ]);
    expect(
      gatewayGroup(
        gateway([{ name: 'tls', port: 443, protocol: 'HTTPS' }]),
        listenerVerdicts(gateway([{ name: 'tls', port: 443, protocol: 'HTTPS' }])),
        defaultGatewayDefaults,
      ),
    ).toBeUndefined();
    expect(gatewayGroupName('n'.repeat(63), 'x'.repeat(253)).length).toBeLessThanOrEqual(253);
  });

  it('compares the group applied with what the apiserver returns (defaults added there do not count)', () => {
    expect(contains({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { c: [1, 2] } })).toBe(true);
    expect(contains({ a: 1, b: { c: [1] } }, { b: { c: [1, 2] } })).toBe(false);
    expect(contains({ a: 1 }, { a: 2 })).toBe(false);
  });
});

describe('the Gateway flags', () => {
  it('parse scheme, subnet tags and inbound CIDRs, and refuse bad values naming the flag', () => {
    expect(parseGatewaySettings(new Map())).toEqual(defaultGatewayDefaults);
    expect(
      parseGatewaySettings(
        new Map([
          ['gateway-scheme', 'internet-facing'],
          ['gateway-subnet-tags', 'role=edge, team=a'],
          ['gateway-inbound-cidrs', '10.0.0.0/8,192.168.0.0/16'],
        ]),
      ),
    ).toEqual({
      scheme: 'internet-facing',
      subnetTags: { role: 'edge', team: 'a' },
      inboundCIDRs: ['10.0.0.0/8', '192.168.0.0/16'],
    });
    expect(() => parseGatewaySettings(new Map([['gateway-scheme', 'public']]))).toThrow(/--gateway-scheme/);
    expect(() => parseGatewaySettings(new Map([['gateway-subnet-tags', 'novalue']]))).toThrow(
      /--gateway-subnet-tags/,
    );
    expect(() => parseGatewaySettings(new Map([['gateway-inbound-cidrs', 'anywhere']]))).toThrow(
      /--gateway-inbound-cidrs/,
    );
  });
});

describe('a listener whose certificates do not resolve', () => {
  it('still takes routes (counted, Accepted) but brings no rule to the load balancer', () => {
    const gw = gateway([
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        tls: { certificateRefs: [{ name: 'missing' }] },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]);
    const listeners = listenerVerdicts(gw, () => ({
      ok: false,
      reason: 'InvalidCertificateRef',
      message: 'Secret infra/missing does not exist',
    }));
    expect(listeners.map((l) => [l.attachable, l.usable])).toEqual([[true, false]]);
    const on = routeOnGateway(
      route('team', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [toWeb] }),
      world(gw, { listeners }),
    );
    expect(on.parents[0]?.accepted.reason).toBe('Accepted');
    expect(on.parents[0]?.listeners).toEqual(['https']);
    expect(on.member).toBeUndefined();
    const s = gatewayStatus(
      gw,
      listeners,
      { programmed: false, message: '', dnsName: undefined },
      new Map([['https', 1]]),
      now,
    );
    expect(s.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True', reason: 'Accepted' });
    expect(s.listeners[0]?.attachedRoutes).toBe(1);
    expect(s.listeners[0]?.conditions.find((c) => c.type === 'ResolvedRefs')?.reason).toBe(
      'InvalidCertificateRef',
    );
  });
});

describe('RequestRedirect', () => {
  const gw = gateway([http('web')]);
  const redirecting = (requestRedirect: Record<string, unknown>): HTTPRoute =>
    route('infra', {
      parentRefs: [{ name: 'gw' }],
      rules: [
        { filters: [{ type: 'RequestRedirect', requestRedirect }], backendRefs: [{ name: 'web', port: 80 }] },
      ],
    });

  it('becomes an ALB redirect: host and status kept as asked, the rest of the request kept', () => {
    const on = routeOnGateway(redirecting({ hostname: 'example.org', statusCode: 301 }), world(gw));
    expect(on.parents[0]?.accepted.reason).toBe('Accepted');
    expect(on.member?.spec.rules?.[0]?.action).toEqual({
      redirect: {
        protocol: '#{protocol}',
        host: 'example.org',
        port: '#{port}',
        path: '/#{path}',
        query: '#{query}',
        statusCode: 'HTTP_301',
      },
    });
  });

  it("takes the scheme's well-known port when the scheme changes, a full path, and 302 by default", () => {
    const on = routeOnGateway(
      redirecting({ scheme: 'https', path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } }),
      world(gw),
    );
    expect(on.member?.spec.rules?.[0]?.action.redirect).toMatchObject({
      protocol: 'HTTPS',
      port: '443',
      path: '/new',
      statusCode: 'HTTP_302',
    });
  });

  it('refuses what an ALB redirect cannot do, naming the field', () => {
    for (const [r, field] of [
      [{ statusCode: 307 }, 'requestRedirect.statusCode'],
      [{ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/x' } }, 'requestRedirect.path'],
    ] as const) {
      const on = routeOnGateway(redirecting(r), world(gw));
      expect(on.parents[0]?.accepted.reason).toBe('UnsupportedValue');
      expect(on.parents[0]?.accepted.message).toContain(`spec.rules[0].filters[0].${field}`);
    }
  });
});
