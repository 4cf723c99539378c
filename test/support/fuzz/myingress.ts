// MyIngress specs for the fuzz test: valid HTTP load balancers (fixed
// responses, redirects, forwards to a Service, rules, attributes, tags) and
// mutations of them.
import fc from 'fast-check';
import { hostileString, injectionSamples, unicodeSamples } from './hostile.ts';
import { fuzzCases, pinned, type FuzzCase, type Mutation } from './mutate.ts';
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

const forward = fc
  .tuple(fc.constantFrom('web', 'api'), fc.constantFrom(80, 8080), fc.option(dnsLabel, { nil: undefined }))
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
