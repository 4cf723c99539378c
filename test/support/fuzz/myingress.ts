// MyIngress specs for the fuzz test: valid HTTP load balancers (fixed
// responses, redirects, forwards to a Service, rules, attributes, tags) and
// mutations of them.
import fc from 'fast-check';
import { hostileString, injectionSamples, unicodeSamples } from './hostile.ts';
import { fuzzCases, pinned, type FuzzCase, type Mutation } from './mutate.ts';
import type { Settled } from './outcome.ts';
import { compact, dnsLabel, plainTags, printable } from './values.ts';

const fixedResponse = fc
  .tuple(
    // 2XX, 4XX or 5XX: ELBv2 has no 3XX fixed responses (the schema says so too).
    fc.constantFrom(200, 400, 500).chain((base) => fc.integer({ min: base, max: base + 99 })),
    fc.option(fc.constantFrom('text/plain', 'text/html', 'application/json'), { nil: undefined }),
    fc.option(printable(200), { nil: undefined }),
  )
  .map(([statusCode, contentType, body]) => ({ fixedResponse: compact({ statusCode, contentType, body }) }));

const redirect = fc
  .tuple(
    fc.option(fc.constantFrom('HTTP', 'HTTPS', '#{protocol}'), { nil: undefined }),
    fc.option(fc.constantFrom('443', '8443', '#{port}'), { nil: undefined }),
    fc.option(
      dnsLabel.map((l) => `${l}.example.net`),
      { nil: undefined },
    ),
    fc.option(
      dnsLabel.map((l) => `/${l}/#{path}`),
      { nil: undefined },
    ),
    fc.option(fc.constantFrom('HTTP_301', 'HTTP_302'), { nil: undefined }),
  )
  .map(([protocol, port, host, path, statusCode]) => ({
    redirect: compact({ protocol, port, host, path, statusCode }),
  }));

/**
 * The Services the fuzz namespace holds, with their ports, as a user would
 * have them: valid specs forward only to these, so they can become Ready.
 */
export const fuzzServices: ReadonlyMap<string, readonly number[]> = new Map([
  ['web', [80, 8080]],
  ['api', [80, 8080]],
]);

/** {@link fuzzServices} as Service manifests for the namespace. Pure. */
export function fuzzServiceManifests(): Record<string, unknown>[] {
  return [...fuzzServices].map(([name, ports]) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: {
      selector: { app: name },
      ports: ports.map((port) => ({ name: `p${port}`, port, targetPort: 8080, protocol: 'TCP' })),
    },
  }));
}

const forward = fc
  .tuple(
    fc.constantFrom(...fuzzServices.keys()),
    fc.constantFrom(80, 8080),
    fc.option(dnsLabel, { nil: undefined }),
  )
  .map(([name, port, hcPath]) => ({
    forward: {
      service: compact({
        name,
        port,
        healthCheck: hcPath === undefined ? undefined : { path: `/${hcPath}` },
      }),
    },
  }));

const action = fc.oneof(fixedResponse, redirect, forward);

/**
 * A valid MyIngress spec: subnets picked by the `kubernetes.io/role/elb`
 * tag, one or two HTTP listeners, up to three rules, attributes and tags.
 */
export function validMyIngressSpec(): fc.Arbitrary<Record<string, unknown>> {
  const listeners = fc
    .uniqueArray(fc.integer({ min: 1, max: 65535 }), { minLength: 1, maxLength: 2 })
    .chain((ports) =>
      fc.tuple(
        ...ports.map((port) => action.map((defaultAction) => ({ port, protocol: 'HTTP', defaultAction }))),
      ),
    );
  const rules = fc.uniqueArray(fc.integer({ min: 1, max: 50000 }), { maxLength: 3 }).chain((prios) =>
    fc.tuple(
      ...prios.map((priority) =>
        fc
          .tuple(
            fc.option(
              fc.array(
                dnsLabel.map((l) => `${l}.example.net`),
                { minLength: 1, maxLength: 2 },
              ),
              {
                nil: undefined,
              },
            ),
            fc.array(
              dnsLabel.map((l) => `/${l}/*`),
              { minLength: 1, maxLength: 2 },
            ),
            action,
          )
          .map(([hosts, paths, a]) => compact({ priority, hosts, paths, action: a })),
      ),
    ),
  );
  return fc
    .tuple(
      listeners,
      rules,
      fc.constantFrom('internet-facing', 'internal'),
      fc.option(
        fc
          .tuple(fc.integer({ min: 1, max: 4000 }), fc.boolean())
          .map(([idleTimeoutSeconds, http2]) => ({ idleTimeoutSeconds, http2 })),
        { nil: undefined },
      ),
      plainTags,
    )
    .map(([ls, rs, scheme, attributes, tags]) =>
      compact({
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        scheme,
        listeners: ls,
        rules: rs.length > 0 ? rs : undefined,
        attributes,
        tags: Object.keys(tags).length > 0 ? tags : undefined,
        deletionPolicy: 'Delete',
      }),
    );
}

/** The MyIngress fields the mutations attack. */
const paths: readonly (readonly (string | number)[])[] = [
  ['listeners'],
  ['scheme'],
  ['tags'],
  ['listeners', 0, 'port'],
  ['listeners', 0, 'protocol'],
  ['listeners', 0, 'certificateArn'],
  ['listeners', 0, 'sslPolicy'],
  ['listeners', 0, 'defaultAction'],
  ['listeners', 0, 'defaultAction', 'fixedResponse', 'statusCode'],
  ['listeners', 0, 'defaultAction', 'forward', 'service', 'name'],
  ['listeners', 0, 'defaultAction', 'forward', 'service', 'port'],
  ['listeners', 1],
  ['rules'],
  ['rules', 0, 'priority'],
  ['rules', 0, 'listenerPort'],
  ['rules', 0, 'hosts', 0],
  ['rules', 0, 'paths', 0],
  ['rules', 0, 'action'],
  ['attributes'],
  ['attributes', 'idleTimeoutSeconds'],
  ['attributes', 'deletionProtection'],
  ['ipAddressType'],
  ['subnets'],
  ['subnets', 0],
  ['securityGroups', 0],
  ['subnetSelector'],
  ['externalName'],
];

/** A hostile string short enough for a field of `max` characters. */
const fits = (max: number): fc.Arbitrary<string> =>
  hostileString.filter((s) => s.length > 0 && s.length <= max);

/** Values that pass the schema where it allows free text, so they reach the operator and AWS. */
const targeted: fc.Arbitrary<Mutation[]> = fc.oneof(
  fc.tuple(fits(16), fits(128), fits(128), fits(128)).map(([port, host, path, query]): Mutation[] => [
    {
      op: 'set',
      path: ['listeners', 0, 'defaultAction'],
      value: { redirect: { port, host, path, query } },
    },
  ]),
  fits(1024).map((body): Mutation[] => [
    {
      op: 'set',
      path: ['listeners', 0, 'defaultAction'],
      value: { fixedResponse: { statusCode: 200, body } },
    },
  ]),
  fits(128).map((sslPolicy): Mutation[] => [
    {
      op: 'set',
      path: ['listeners', 0],
      value: {
        port: 443,
        protocol: 'HTTPS',
        certificateArn: `arn:aws:acm:us-east-1:123456789012:certificate/${sslPolicy.slice(0, 40)}`,
        sslPolicy,
        defaultAction: { fixedResponse: { statusCode: 404 } },
      },
    },
    { op: 'delete', path: ['listeners', 1] },
    { op: 'delete', path: ['rules'] },
  ]),
  fc
    .tuple(
      fits(63).filter((b) => b.length >= 3),
      fits(256),
    )
    .map(([bucket, prefix]): Mutation[] => [
      { op: 'set', path: ['attributes', 'accessLogs'], value: { bucket, prefix } },
    ]),
  fc
    .tuple(fc.constantFrom(...injectionSamples, ...unicodeSamples), fits(256))
    .map(([k, v]): Mutation[] => [
      { op: 'set', path: ['tags'], value: { [k]: v, [`${k}2`.repeat(60)]: 'x' } },
    ]),
  fc
    .tuple(fc.constantFrom(...injectionSamples, ...unicodeSamples), fits(256))
    .map(([k, v]): Mutation[] => [{ op: 'set', path: ['subnetSelector', 'tags'], value: { [k]: v } }]),
  fc
    .constantFrom(
      'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/nope/0123456789abcdef',
      'arn:aws:rds:us-east-1:123456789012:db:not-a-load-balancer',
      ...injectionSamples,
    )
    .map((v): Mutation[] => [{ op: 'set', path: ['externalName'], value: v }]),
  fc
    .constantFrom(
      ['subnet-0', 'subnet-0'],
      ['subnet-deadbeef', 'subnet-00000000'],
      ['subnet-0123', 'subnet-4567'],
    )
    .map((subnets): Mutation[] => [
      { op: 'delete', path: ['subnetSelector'] },
      { op: 'set', path: ['subnets'], value: subnets },
    ]),
  fc
    .constantFrom(['sg-0'], ['sg-deadbeef', 'sg-deadbeef'])
    .map((sgs): Mutation[] => [{ op: 'set', path: ['securityGroups'], value: sgs }]),
);

/** MyIngress cases (valid, mutated, targeted). */
export function myIngressCases(): fc.Arbitrary<FuzzCase> {
  return fuzzCases(validMyIngressSpec(), paths, [['tags'], ['subnetSelector', 'tags']], targeted);
}

const pinnedBase = {
  subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
};

/** MyIngress inputs tried in every run: bugs the fuzzer found, and each injection category in free-text fields. */
export const myIngressPinned: readonly FuzzCase[] = [
  pinned(
    pinnedBase,
    'subnets that do not exist: AWS must not be retried forever',
    [
      { op: 'delete', path: ['subnetSelector'] },
      { op: 'set', path: ['subnets'], value: ['subnet-0', 'subnet-1'] },
    ],
    'terminal',
  ),
  pinned(
    pinnedBase,
    'a 3XX fixed response, which ELBv2 refuses',
    [{ op: 'set', path: ['listeners', 0, 'defaultAction', 'fixedResponse', 'statusCode'], value: 302 }],
    'rejected',
  ),
  pinned(
    pinnedBase,
    'a forward to a Service the namespace does not have: not Ready (issue 14 item 11)',
    [
      {
        op: 'set',
        path: ['listeners', 0, 'defaultAction'],
        value: { forward: { service: { name: 'nosuch', port: 80 } } },
      },
    ],
    'missingBackend',
  ),
  pinned(
    pinnedBase,
    'a forward to a port its Service does not have: not Ready',
    [
      {
        op: 'set',
        path: ['listeners', 0, 'defaultAction'],
        value: { forward: { service: { name: 'web', port: 443 } } },
      },
    ],
    'missingBackend',
  ),
  pinned(pinnedBase, 'injections in redirect fields', [
    {
      op: 'set',
      path: ['listeners', 0, 'defaultAction'],
      value: {
        redirect: {
          host: '$(rm -rf /)',
          path: '/../../etc/passwd%00',
          query: "'; DROP TABLE x; --",
          port: '{{7*7}}',
        },
      },
    },
  ]),
  pinned(pinnedBase, 'CRLF and control characters in a fixed response body and tags', [
    {
      op: 'set',
      path: ['listeners', 0, 'defaultAction', 'fixedResponse', 'body'],
      value: 'a\r\nSet-Cookie: x=1\u0000\u001b[31m',
    },
    { op: 'set', path: ['tags'], value: { 'x\r\ny': '{{7*7}}', '../../k': '%00' } },
  ]),
];

/** A forward of a stored spec to a Service or port that `services` does not have. */
export interface AbsentBackend {
  readonly service: string;
  readonly port: number;
  /** True when the Service itself is missing (not only the port). */
  readonly serviceMissing: boolean;
}

/**
 * The forwards of a stored MyIngress spec (listeners' default actions and
 * rules) whose Service or port is not among `services`, each once. Any
 * shape is tolerated: what is not a forward is skipped. Pure.
 */
export function absentBackends(
  spec: unknown,
  services: ReadonlyMap<string, readonly number[]>,
): AbsentBackend[] {
  const record = (v: unknown): Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const s = record(spec);
  const actions = [
    ...list(s.listeners).map((l) => record(l).defaultAction),
    ...list(s.rules).map((r) => record(r).action),
  ];
  const out = new Map<string, AbsentBackend>();
  for (const a of actions) {
    const svc = record(record(record(a).forward).service);
    if (typeof svc.name !== 'string' || typeof svc.port !== 'number') continue;
    const ports = services.get(svc.name);
    if (ports !== undefined && ports.includes(svc.port)) continue;
    out.set(`${svc.name}\u0000${svc.port}`, {
      service: svc.name,
      port: svc.port,
      serviceMissing: ports === undefined,
    });
  }
  return [...out.values()];
}

/**
 * What is wrong with where a MyIngress ended, given the Services that exist
 * (undefined when nothing): Ready while a backend is absent; ServiceNotFound
 * or ServicePortNotFound while every backend exists, with the other reason
 * than the absent backends call for, or with a message that names neither
 * the field nor the Service. Pure.
 */
export function backendVerdict(
  spec: unknown,
  settled: Settled,
  services: ReadonlyMap<string, readonly number[]>,
): string | undefined {
  const absent = absentBackends(spec, services);
  const named = absent.map((a) => `${JSON.stringify(a.service)}:${a.port}`).join(', ');
  if (settled.state === 'ready')
    return absent.length > 0 ? `Ready although it forwards to ${named}, which does not exist` : undefined;
  if (settled.state !== 'missingBackend') return undefined;
  if (absent.length === 0) return `${settled.reason} although every Service and port it names exists`;
  const want = absent.some((a) => a.serviceMissing) ? 'ServiceNotFound' : 'ServicePortNotFound';
  if (settled.reason !== want) return `${settled.reason} for ${named} (want ${want})`;
  const first = absent[0];
  if (
    first !== undefined &&
    !settled.message.includes(JSON.stringify(first.service)) &&
    !settled.message.includes(`Service ${first.service} `)
  )
    return `${settled.reason} message does not name Service ${JSON.stringify(first.service)}: ${settled.message}`;
  return undefined;
}
