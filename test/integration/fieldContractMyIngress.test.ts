// MyIngress's field contract, generated half (test/support/fieldProbes.ts): every field the
// contract says is applied in AWS is changed after create (and back), and ELBv2 shows it as soon as
// the object is Ready and Synced at the new generation; every fixed field's change is refused by
// the apiserver. A field added to the contract without a probe fails the first test. The
// controller reaches moto through a proxy whose only rule makes AssociateWebACL replace an
// attached web ACL, as AWS does (dev/wafv2Fidelity.ts).
import { ACMClient, RequestCertificateCommand } from '@aws-sdk/client-acm';
import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
  type Listener,
  type LoadBalancer,
  type Rule,
  type TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { CreateWebACLCommand, GetWebACLForResourceCommand, WAFV2Client } from '@aws-sdk/client-wafv2';
import { afterAll, beforeAll } from 'vitest';
import { acmListCertificatesAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { wafv2AssociateReplaces } from '../../dev/wafv2Fidelity.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import {
  myIngressFieldContract,
  myIngressType,
  type BackendServiceSpec,
  type ListenerSpec,
  type MyIngress,
  type MyIngressSpec,
  type RuleSpec,
  type WeightedBackendSpec,
} from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { importCertificate } from '../support/acmCertificates.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import {
  describeFieldContract,
  waitSettledAtGeneration,
  type FieldProbe,
  type FixedProbe,
} from '../support/fieldProbes.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let admin: KubeClient;
let elb: ElasticLoadBalancingV2Client;
let ec2: EC2Client;
let controller: RunningController;
let ns: string;
/** Subnets: two for the spec, two more that only the selector's tag matches. */
let subnets: string[] = [];
let groups: string[] = [];
let certs: string[] = [];
/** Hosts of this run's own domain, each with an ISSUED (imported) certificate: certificateHosts. */
const hostDomain = `${Math.random().toString(16).slice(2, 10)}.probe-hosts.example.com`;
const hosts = [`a.${hostDomain}`, `b.${hostDomain}`];
let hostCerts: string[] = [];
let bucket = '';
let waf: WAFV2Client;
/** Two REGIONAL WAFv2 web ACLs. */
let webAcls: string[] = [];
/** Between the controller and moto: makes moto's AssociateWebACL replace, as AWS's does. */
let proxy: AwsFaultProxy;
const name = 'probed';

async function loadBalancer(): Promise<LoadBalancer> {
  const arn = (await readObject<MyIngress>(admin, myIngressType, ns, name))?.status?.arn;
  const out = await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [String(arn)] }));
  const lb = out.LoadBalancers?.[0];
  if (lb === undefined) throw new Error('no load balancer');
  return lb;
}

async function listeners(): Promise<Listener[]> {
  const lb = await loadBalancer();
  const out = await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lb.LoadBalancerArn }));
  return [...(out.Listeners ?? [])].sort((a, b) => (a.Port ?? 0) - (b.Port ?? 0));
}

async function listenerOn(port: number): Promise<Listener | undefined> {
  return (await listeners()).find((l) => l.Port === port);
}

/** The SNI certificates (not the default) of the listener on `port`, sorted. */
async function sniOn(port: number): Promise<string[]> {
  const l = await listenerOn(port);
  const out = await elb.send(new DescribeListenerCertificatesCommand({ ListenerArn: l?.ListenerArn }));
  return (out.Certificates ?? [])
    .filter((c) => c.IsDefault !== true)
    .map((c) => c.CertificateArn ?? '')
    .sort();
}

/** The non-default rules of each listener, by port. */
async function rulesByPort(): Promise<Map<number, Rule[]>> {
  const out = new Map<number, Rule[]>();
  for (const l of await listeners()) {
    const rs = await elb.send(new DescribeRulesCommand({ ListenerArn: l.ListenerArn }));
    out.set(
      l.Port ?? 0,
      (rs.Rules ?? [])
        .filter((r) => r.IsDefault !== true)
        .sort((a, b) => Number(a.Priority) - Number(b.Priority)),
    );
  }
  return out;
}

async function ruleAt(priority: number): Promise<Rule | undefined> {
  return [...(await rulesByPort()).values()].flat().find((r) => Number(r.Priority) === priority);
}

const conditionValues = (r: Rule | undefined, field: string): string[] =>
  (r?.Conditions ?? [])
    .filter((c) => c.Field === field)
    .flatMap((c) => c.HostHeaderConfig?.Values ?? c.PathPatternConfig?.Values ?? c.Values ?? [])
    .sort();

/**
 * The target groups the load balancer's listeners and rules forward to (TargetGroupArn and
 * ForwardConfig), read from their actions: moto associates a target group with the load balancer
 * only when a listener or rule is created with it, not when ModifyRule or ModifyListener adds it.
 */
async function usedTargetGroups(): Promise<TargetGroup[]> {
  const actions = [
    ...(await listeners()).flatMap((l) => l.DefaultActions ?? []),
    ...[...(await rulesByPort()).values()].flat().flatMap((r) => r.Actions ?? []),
  ];
  const arns = [
    ...new Set(
      actions.flatMap((a) => [
        ...(a.TargetGroupArn !== undefined ? [a.TargetGroupArn] : []),
        ...(a.ForwardConfig?.TargetGroups ?? []).map((g) => g.TargetGroupArn ?? ''),
      ]),
    ),
  ].filter((arn) => arn !== '');
  if (arns.length === 0) return [];
  return (await elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: arns }))).TargetGroups ?? [];
}

/** Health check paths of the target groups the load balancer uses, sorted. */
async function healthCheckPaths(): Promise<string[]> {
  return (await usedTargetGroups()).map((t) => t.HealthCheckPath ?? '').sort();
}

/**
 * One target group attribute (by ELBv2 key) of each target group the load balancer uses, by the
 * group's Service (its name's `-<service>-<port>` tail: `web`, `api`).
 */
async function targetGroupAttribute(key: string): Promise<Record<string, string | undefined>> {
  const by: Record<string, string | undefined> = {};
  for (const tg of await usedTargetGroups()) {
    const attrs = await elb.send(
      new DescribeTargetGroupAttributesCommand({ TargetGroupArn: tg.TargetGroupArn }),
    );
    const service = /-([a-z]+)-80$/.exec(tg.TargetGroupName ?? '')?.[1] ?? '?';
    by[service] = attrs.Attributes?.find((a) => a.Key === key)?.Value;
  }
  return by;
}

type WebService = BackendServiceSpec & { healthCheck: { path: string } };
/** The target group attributes a backend may set. */
type TargetGroupSettings = Pick<BackendServiceSpec, 'deregistrationDelaySeconds' | 'slowStartSeconds'>;

const web = (path: string, settings: TargetGroupSettings = {}): { forward: { service: WebService } } => ({
  forward: { service: { name: 'web', port: 80, healthCheck: { path }, ...settings } },
});

/** Rules with rule 20's forward to Service api carrying `settings`. */
const apiRules = (settings: TargetGroupSettings): RuleSpec[] =>
  baseRules(
    {},
    {
      action: {
        forward: { service: { name: 'api', port: 80, healthCheck: { path: '/api-healthz' }, ...settings } },
      },
    },
  );

const baseListeners = (
  tls: Partial<ListenerSpec> = {},
  webPath = '/healthz',
  webSettings: TargetGroupSettings = {},
): ListenerSpec[] => [
  { port: 80, protocol: 'HTTP', defaultAction: web(webPath, webSettings) },
  {
    port: 8443,
    protocol: 'HTTPS',
    certificateArn: certs[0] ?? '',
    sslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
    defaultAction: { fixedResponse: { statusCode: 404 } },
    ...tls,
  },
];

const baseRules = (r10: Partial<RuleSpec> = {}, r20: Partial<RuleSpec> = {}): RuleSpec[] => [
  {
    priority: 10,
    listenerPort: 80,
    paths: ['/old/*'],
    action: { fixedResponse: { statusCode: 410, body: 'gone' } },
    ...r10,
  },
  {
    priority: 20,
    listenerPort: 80,
    hosts: ['api.example.com'],
    action: { forward: { service: { name: 'api', port: 80, healthCheck: { path: '/api-healthz' } } } },
    ...r20,
  },
];

/** A weighted forward: `first` (with `settings`) and Service canary, with these weights. */
const weighted = (
  first: BackendServiceSpec,
  settings: Partial<BackendServiceSpec> = {},
  weights: [number, number] = [1, 1],
): { forward: { services: WeightedBackendSpec[] } } => ({
  forward: {
    services: [
      { ...first, ...settings, weight: weights[0] },
      { name: 'canary', port: 80, healthCheck: { path: '/canary' }, weight: weights[1] },
    ],
  },
});

/** Rules with rule 20 forwarding to api and canary by weight. */
const weightedRules = (settings: Partial<BackendServiceSpec> = {}, weights?: [number, number]): RuleSpec[] =>
  baseRules(
    {},
    { action: weighted({ name: 'api', port: 80, healthCheck: { path: '/api-healthz' } }, settings, weights) },
  );

/** Listeners with port 80's default action forwarding to web and canary by weight. */
const weightedListeners = (
  settings: Partial<BackendServiceSpec> = {},
  weights?: [number, number],
): ListenerSpec[] => [
  {
    port: 80,
    protocol: 'HTTP',
    defaultAction: weighted({ name: 'web', port: 80, healthCheck: { path: '/healthz' } }, settings, weights),
  },
  ...baseListeners().slice(1),
];

/** A forward's target groups by Service (the name's `-<service>-80` tail) and weight, sorted. */
const forwardWeights = (actions: Rule['Actions']): [string, number][] => {
  const a = actions?.[0];
  const groups = a?.ForwardConfig?.TargetGroups ?? [{ TargetGroupArn: a?.TargetGroupArn, Weight: 1 }];
  return groups
    .map((g): [string, number] => [/-([a-z]+)-80\//.exec(g.TargetGroupArn ?? '')?.[1] ?? '?', g.Weight ?? 1])
    .sort((x, y) => x[0].localeCompare(y[0]));
};

/** Rule 10's conditions of `field`, as comparable values. */
const conditionsOf = async (field: string): Promise<unknown[]> =>
  ((await ruleAt(10))?.Conditions ?? [])
    .filter((c) => c.Field === field)
    .flatMap((c): unknown[] => {
      if (field === 'http-header')
        return [[(c.HttpHeaderConfig?.HttpHeaderName ?? '').toLowerCase(), c.HttpHeaderConfig?.Values ?? []]];
      if (field === 'query-string')
        return (c.QueryStringConfig?.Values ?? []).map((kv) => [kv.Key ?? null, kv.Value ?? '']);
      return c.HttpRequestMethodConfig?.Values ?? [];
    });

const base = (): MyIngressSpec => ({
  subnets: subnets.slice(0, 2),
  scheme: 'internal',
  securityGroups: [groups[0] ?? ''],
  ipAddressType: 'ipv4',
  listeners: baseListeners(),
  rules: baseRules(),
  attributes: { idleTimeoutSeconds: 60 },
  tags: { team: 'web' },
});

const probe = (
  field: string,
  read: () => Promise<unknown>,
  before: unknown,
  ...steps: [Record<string, unknown>, unknown][]
): FieldProbe => ({ field, before, steps: steps.map(([patch, aws]) => ({ patch, aws })), read });

/** The CIDRs the load balancer's managed security group (the one carrying Skylift's tags) lets in. */
const managedInbound = async (): Promise<string[]> => {
  const ids = (await loadBalancer()).SecurityGroups ?? [];
  if (ids.length === 0) return [];
  const out = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: ids }));
  const managed = (out.SecurityGroups ?? []).filter((g) => g.Tags?.some((t) => t.Key === 'skylift.dev/uid'));
  return [
    ...new Set(
      managed.flatMap((g) =>
        (g.IpPermissions ?? []).flatMap((p) => (p.IpRanges ?? []).map((r) => r.CidrIp ?? '')),
      ),
    ),
  ].sort();
};

const lbSubnets = async (): Promise<string[]> =>
  ((await loadBalancer()).AvailabilityZones ?? []).map((z) => z.SubnetId ?? '').sort();

const probes = (): FieldProbe[] => [
  probe(
    'subnets',
    lbSubnets,
    subnets.slice(0, 2).sort(),
    [{ subnets: [subnets[0], subnets[2]] }, [subnets[0], subnets[2]].sort()],
    [{ subnets: subnets.slice(0, 2) }, subnets.slice(0, 2).sort()],
  ),
  probe(
    'subnetSelector',
    lbSubnets,
    subnets.slice(0, 2).sort(),
    [{ subnets: null, subnetSelector: { tags: { 'probe-tier': 'selected' } } }, subnets.slice(2, 4).sort()],
    [{ subnetSelector: null, subnets: subnets.slice(0, 2) }, subnets.slice(0, 2).sort()],
  ),
  probe(
    'securityGroups',
    async () => [...((await loadBalancer()).SecurityGroups ?? [])].sort(),
    [groups[0]],
    [{ securityGroups: groups }, [...groups].sort()],
    [{ securityGroups: [groups[0]] }, [groups[0]]],
  ),
  probe(
    'inboundCIDRs',
    managedInbound,
    [],
    [{ securityGroups: null, inboundCIDRs: ['10.0.0.0/8'] }, ['10.0.0.0/8']],
    [{ inboundCIDRs: ['203.0.113.0/24', '198.51.100.0/24'] }, ['198.51.100.0/24', '203.0.113.0/24']],
    [{ securityGroups: [groups[0]], inboundCIDRs: null }, []],
  ),
  probe(
    'ipAddressType',
    async () => (await loadBalancer()).IpAddressType,
    'ipv4',
    [{ ipAddressType: 'dualstack' }, 'dualstack'],
    [{ ipAddressType: 'ipv4' }, 'ipv4'],
  ),
  probe(
    'listeners[].port',
    async () => (await listeners()).map((l) => l.Port),
    [80, 8443],
    [{ listeners: baseListeners({ port: 9443 }) }, [80, 9443]],
    [{ listeners: baseListeners() }, [80, 8443]],
  ),
  probe(
    'listeners[].protocol',
    async () => (await listenerOn(8443))?.Protocol,
    'HTTPS',
    [
      {
        listeners: [
          baseListeners()[0],
          { port: 8443, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } },
        ],
      },
      'HTTP',
    ],
    [{ listeners: baseListeners() }, 'HTTPS'],
  ),
  probe(
    'listeners[].certificateArn',
    async () => (await listenerOn(8443))?.Certificates?.map((c) => c.CertificateArn),
    [certs[0]],
    [{ listeners: baseListeners({ certificateArn: certs[1] ?? '' }) }, [certs[1]]],
    [{ listeners: baseListeners() }, [certs[0]]],
  ),
  probe(
    'listeners[].additionalCertificateArns',
    () => sniOn(8443),
    [],
    [
      { listeners: baseListeners({ additionalCertificateArns: [certs[1] ?? '', certs[2] ?? ''] }) },
      [certs[1], certs[2]].sort(),
    ],
    // The default changes too (ModifyListener): the SNI certificates are what the spec says after it.
    [
      {
        listeners: baseListeners({
          certificateArn: certs[1] ?? '',
          additionalCertificateArns: [certs[2] ?? ''],
        }),
      },
      [certs[2]],
    ],
    [{ listeners: baseListeners() }, []],
  ),
  probe(
    'listeners[].certificateHosts',
    async () => [(await listenerOn(8443))?.Certificates?.[0]?.CertificateArn, await sniOn(8443)],
    [certs[0], []],
    // Without certificateArn: the first host's certificate is the default, the second's SNI.
    [
      {
        listeners: baseListeners({ certificateHosts: hosts }).map(({ certificateArn: _default, ...l }) => l),
      },
      [hostCerts[0], [hostCerts[1]]],
    ],
    // With certificateArn: the host's certificate is served by SNI.
    [{ listeners: baseListeners({ certificateHosts: [hosts[1] ?? ''] }) }, [certs[0], [hostCerts[1]]]],
    [{ listeners: baseListeners() }, [certs[0], []]],
  ),
  probe(
    'listeners[].sslPolicy',
    async () => (await listenerOn(8443))?.SslPolicy,
    'ELBSecurityPolicy-TLS13-1-2-2021-06',
    [{ listeners: baseListeners({ sslPolicy: 'ELBSecurityPolicy-2016-08' }) }, 'ELBSecurityPolicy-2016-08'],
    [{ listeners: baseListeners() }, 'ELBSecurityPolicy-TLS13-1-2-2021-06'],
  ),
  probe(
    'listeners[].defaultAction',
    async () => {
      const a = (await listenerOn(8443))?.DefaultActions?.[0];
      return { type: a?.Type, status: a?.FixedResponseConfig?.StatusCode ?? a?.RedirectConfig?.StatusCode };
    },
    { type: 'fixed-response', status: '404' },
    [
      { listeners: baseListeners({ defaultAction: { fixedResponse: { statusCode: 503, body: 'down' } } }) },
      { type: 'fixed-response', status: '503' },
    ],
    [
      {
        listeners: baseListeners({
          defaultAction: { redirect: { host: 'example.com', statusCode: 'HTTP_302' } },
        }),
      },
      { type: 'redirect', status: 'HTTP_302' },
    ],
    [{ listeners: baseListeners() }, { type: 'fixed-response', status: '404' }],
  ),
  probe(
    'listeners[].defaultAction.forward.service.healthCheck',
    healthCheckPaths,
    ['/api-healthz', '/healthz'],
    [{ listeners: baseListeners({}, '/ready') }, ['/api-healthz', '/ready']],
    [{ listeners: baseListeners() }, ['/api-healthz', '/healthz']],
  ),
  probe(
    'listeners[].defaultAction.forward.service.deregistrationDelaySeconds',
    () => targetGroupAttribute('deregistration_delay.timeout_seconds'),
    { api: '300', web: '300' },
    [
      { listeners: baseListeners({}, '/healthz', { deregistrationDelaySeconds: 15 }) },
      { api: '300', web: '15' },
    ],
    [{ listeners: baseListeners() }, { api: '300', web: '300' }],
  ),
  probe(
    'listeners[].defaultAction.forward.service.slowStartSeconds',
    () => targetGroupAttribute('slow_start.duration_seconds'),
    { api: '0', web: '0' },
    [{ listeners: baseListeners({}, '/healthz', { slowStartSeconds: 30 }) }, { api: '0', web: '30' }],
    [{ listeners: baseListeners() }, { api: '0', web: '0' }],
  ),
  probe(
    'rules[].action.forward.service.deregistrationDelaySeconds',
    () => targetGroupAttribute('deregistration_delay.timeout_seconds'),
    { api: '300', web: '300' },
    [{ rules: apiRules({ deregistrationDelaySeconds: 0 }) }, { api: '0', web: '300' }],
    [{ rules: baseRules() }, { api: '300', web: '300' }],
  ),
  probe(
    'rules[].action.forward.service.slowStartSeconds',
    () => targetGroupAttribute('slow_start.duration_seconds'),
    { api: '0', web: '0' },
    [{ rules: apiRules({ slowStartSeconds: 900 }) }, { api: '900', web: '0' }],
    [{ rules: baseRules() }, { api: '0', web: '0' }],
  ),
  probe(
    'rules[].headers',
    () => conditionsOf('http-header'),
    [],
    [{ rules: baseRules({ headers: [{ name: 'X-Probe', values: ['a'] }] }) }, [['x-probe', ['a']]]],
    [
      { rules: baseRules({ headers: [{ name: 'X-Probe', values: ['b', 'c*'] }] }) },
      [['x-probe', ['b', 'c*']]],
    ],
    [{ rules: baseRules() }, []],
  ),
  probe(
    'rules[].queryStrings',
    () => conditionsOf('query-string'),
    [],
    [
      { rules: baseRules({ queryStrings: [{ key: 'v', value: '1' }, { value: 'x' }] }) },
      [
        ['v', '1'],
        [null, 'x'],
      ],
    ],
    [{ rules: baseRules() }, []],
  ),
  probe(
    'rules[].methods',
    () => conditionsOf('http-request-method'),
    [],
    [{ rules: baseRules({ methods: ['GET', 'HEAD'] }) }, ['GET', 'HEAD']],
    [{ rules: baseRules() }, []],
  ),
  probe(
    'rules[].action.forward.services[].weight',
    async () => forwardWeights((await ruleAt(20))?.Actions),
    [['api', 1]],
    [
      { rules: weightedRules({}, [3, 1]) },
      [
        ['api', 3],
        ['canary', 1],
      ],
    ],
    [
      { rules: weightedRules({}, [0, 5]) },
      [
        ['api', 0],
        ['canary', 5],
      ],
    ],
    [{ rules: baseRules() }, [['api', 1]]],
  ),
  probe(
    'rules[].action.forward.services[].healthCheck',
    healthCheckPaths,
    ['/api-healthz', '/healthz'],
    [{ rules: weightedRules() }, ['/api-healthz', '/canary', '/healthz']],
    [
      { rules: weightedRules({ healthCheck: { path: '/api-ready' } }) },
      ['/api-ready', '/canary', '/healthz'],
    ],
    [{ rules: baseRules() }, ['/api-healthz', '/healthz']],
  ),
  probe(
    'rules[].action.forward.services[].deregistrationDelaySeconds',
    () => targetGroupAttribute('deregistration_delay.timeout_seconds'),
    { api: '300', web: '300' },
    [{ rules: weightedRules({ deregistrationDelaySeconds: 0 }) }, { api: '0', canary: '300', web: '300' }],
    [{ rules: baseRules() }, { api: '300', web: '300' }],
  ),
  probe(
    'rules[].action.forward.services[].slowStartSeconds',
    () => targetGroupAttribute('slow_start.duration_seconds'),
    { api: '0', web: '0' },
    [{ rules: weightedRules({ slowStartSeconds: 30 }) }, { api: '30', canary: '0', web: '0' }],
    [{ rules: baseRules() }, { api: '0', web: '0' }],
  ),
  probe(
    'listeners[].defaultAction.forward.services[].weight',
    async () => forwardWeights((await listenerOn(80))?.DefaultActions),
    [['web', 1]],
    [
      { listeners: weightedListeners({}, [1, 4]) },
      [
        ['canary', 4],
        ['web', 1],
      ],
    ],
    [{ listeners: baseListeners() }, [['web', 1]]],
  ),
  probe(
    'listeners[].defaultAction.forward.services[].healthCheck',
    healthCheckPaths,
    ['/api-healthz', '/healthz'],
    [
      { listeners: weightedListeners({ healthCheck: { path: '/ready' } }) },
      ['/api-healthz', '/canary', '/ready'],
    ],
    [{ listeners: baseListeners() }, ['/api-healthz', '/healthz']],
  ),
  probe(
    'listeners[].defaultAction.forward.services[].deregistrationDelaySeconds',
    () => targetGroupAttribute('deregistration_delay.timeout_seconds'),
    { api: '300', web: '300' },
    [
      { listeners: weightedListeners({ deregistrationDelaySeconds: 15 }) },
      { api: '300', canary: '300', web: '15' },
    ],
    [{ listeners: baseListeners() }, { api: '300', web: '300' }],
  ),
  probe(
    'listeners[].defaultAction.forward.services[].slowStartSeconds',
    () => targetGroupAttribute('slow_start.duration_seconds'),
    { api: '0', web: '0' },
    [{ listeners: weightedListeners({ slowStartSeconds: 45 }) }, { api: '0', canary: '0', web: '45' }],
    [{ listeners: baseListeners() }, { api: '0', web: '0' }],
  ),
  probe(
    'rules[].priority',
    async () => ((await rulesByPort()).get(80) ?? []).map((r) => r.Priority),
    ['10', '20'],
    [{ rules: baseRules({ priority: 15 }) }, ['15', '20']],
    [{ rules: baseRules() }, ['10', '20']],
  ),
  probe(
    'rules[].listenerPort',
    async () => [...(await rulesByPort())].map(([port, rs]) => [port, rs.map((r) => r.Priority)]),
    [
      [80, ['10', '20']],
      [8443, []],
    ],
    [
      { rules: baseRules({ listenerPort: 8443 }) },
      [
        [80, ['20']],
        [8443, ['10']],
      ],
    ],
    [
      { rules: baseRules() },
      [
        [80, ['10', '20']],
        [8443, []],
      ],
    ],
  ),
  probe(
    'rules[].hosts',
    async () => conditionValues(await ruleAt(20), 'host-header'),
    ['api.example.com'],
    [
      { rules: baseRules({}, { hosts: ['api.example.com', 'api2.example.com'] }) },
      ['api.example.com', 'api2.example.com'],
    ],
    [{ rules: baseRules() }, ['api.example.com']],
  ),
  probe(
    'rules[].paths',
    async () => conditionValues(await ruleAt(10), 'path-pattern'),
    ['/old/*'],
    [{ rules: baseRules({ paths: ['/old/*', '/legacy/*'] }) }, ['/legacy/*', '/old/*']],
    [{ rules: baseRules() }, ['/old/*']],
  ),
  probe(
    'rules[].action',
    async () => {
      const a = (await ruleAt(10))?.Actions?.[0];
      return { type: a?.Type, status: a?.FixedResponseConfig?.StatusCode };
    },
    { type: 'fixed-response', status: '410' },
    [
      { rules: baseRules({ action: { fixedResponse: { statusCode: 418 } } }) },
      { type: 'fixed-response', status: '418' },
    ],
    [{ rules: baseRules() }, { type: 'fixed-response', status: '410' }],
  ),
  probe(
    'rules[].action.forward.service.healthCheck',
    healthCheckPaths,
    ['/api-healthz', '/healthz'],
    [
      {
        rules: baseRules(
          {},
          {
            action: { forward: { service: { name: 'api', port: 80, healthCheck: { path: '/api-ready' } } } },
          },
        ),
      },
      ['/api-ready', '/healthz'],
    ],
    [{ rules: baseRules() }, ['/api-healthz', '/healthz']],
  ),
  probe(
    'attributes',
    async () => {
      const lb = await loadBalancer();
      const out = await elb.send(
        new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: lb.LoadBalancerArn }),
      );
      const a = new Map((out.Attributes ?? []).map((x) => [x.Key ?? '', x.Value ?? '']));
      return {
        idle: a.get('idle_timeout.timeout_seconds') ?? '60',
        http2: a.get('routing.http2.enabled') ?? 'true',
        logs: a.get('access_logs.s3.enabled') ?? 'false',
      };
    },
    { idle: '60', http2: 'true', logs: 'false' },
    [
      { attributes: { idleTimeoutSeconds: 120, http2: false, accessLogs: { bucket, prefix: 'probe' } } },
      { idle: '120', http2: 'false', logs: 'true' },
    ],
    [
      { attributes: { idleTimeoutSeconds: 60, http2: null, accessLogs: null } },
      { idle: '60', http2: 'true', logs: 'false' },
    ],
  ),
  probe(
    'waf',
    async () =>
      (
        await waf.send(
          new GetWebACLForResourceCommand({ ResourceArn: (await loadBalancer()).LoadBalancerArn }),
        )
      ).WebACL?.ARN ?? null,
    null,
    [{ waf: { webAclArn: webAcls[0] } }, webAcls[0]],
    [{ waf: { webAclArn: webAcls[1] } }, webAcls[1]],
    [{ waf: null }, null],
  ),
  probe(
    'tags',
    async () => {
      const lb = await loadBalancer();
      const out = await elb.send(new DescribeTagsCommand({ ResourceArns: [lb.LoadBalancerArn ?? ''] }));
      return Object.fromEntries(
        (out.TagDescriptions?.[0]?.Tags ?? [])
          .filter((t) => !(t.Key ?? '').startsWith('skylift.dev/'))
          .map((t) => [t.Key ?? '', t.Value ?? '']),
      );
    },
    { team: 'web' },
    [{ tags: { team: 'api', env: 'prod' } }, { team: 'api', env: 'prod' }],
    [{ tags: { team: 'web', env: null } }, { team: 'web' }],
  ),
];

const fixed: FixedProbe[] = [
  { field: 'scheme', patch: { scheme: 'internet-facing' } },
  { field: 'externalName', patch: { externalName: 'other' } },
  { field: 'group', patch: { group: { name: 'shared' } } },
];

async function service(svc: string, ip: string): Promise<void> {
  await admin.create(`/api/v1/namespaces/${ns}/services`, {
    metadata: { name: svc },
    spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  await admin.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${svc}-1`,
      labels: {
        'kubernetes.io/service-name': svc,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  });
}

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  ec2 = new EC2Client(direct);
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.40.0.0/16' }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  subnets = [];
  for (const [i, az] of ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d'].entries()) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.40.${i + 1}.0/24`, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
  await ec2.send(
    new CreateTagsCommand({
      Resources: subnets.slice(2, 4),
      Tags: [{ Key: 'probe-tier', Value: 'selected' }],
    }),
  );
  groups = [];
  for (const g of ['probe-lb-a', 'probe-lb-b']) {
    const out = await ec2.send(
      new CreateSecurityGroupCommand({ GroupName: g, Description: g, VpcId: vpcId }),
    );
    groups.push(out.GroupId ?? '');
  }
  const acm = new ACMClient(direct);
  certs = [];
  for (const d of ['a.probe.example.com', 'b.probe.example.com', 'c.probe.example.com']) {
    const out = await acm.send(new RequestCertificateCommand({ DomainName: d }));
    certs.push(out.CertificateArn ?? '');
  }
  hostCerts = [];
  for (const h of hosts) hostCerts.push(await importCertificate(acm, { domain: h }));
  bucket = 'probe-logs';
  waf = new WAFV2Client(direct);
  webAcls = [];
  for (const n of ['probe-acl-a', 'probe-acl-b']) {
    const out = await waf.send(
      new CreateWebACLCommand({
        Name: n,
        Scope: 'REGIONAL',
        DefaultAction: { Allow: {} },
        VisibilityConfig: { SampledRequestsEnabled: false, CloudWatchMetricsEnabled: false, MetricName: n },
      }),
    );
    webAcls.push(out.Summary?.ARN ?? '');
  }
  proxy = await startFaultProxy();
  proxy.inject(wafv2AssociateReplaces());
  proxy.inject(acmListCertificatesAsAws());
  ns = await newNamespace(admin, 'ming-contract');
  await service('web', '10.40.1.10');
  await service('api', '10.40.2.10');
  await service('canary', '10.40.3.10');
  controller = await startController((s) => myIngressController(s, { pollMs: 300 }), {
    namespace: ns,
    endpoint: proxy.endpoint,
  });
  await admin.create<MyIngress>(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec: base(),
  });
  await waitSettledAtGeneration(admin, myIngressType, ns, name, 'create');
});
afterAll(async () => {
  await controller.stop();
  await proxy.stop();
});

describeFieldContract({
  kind: 'MyIngress',
  service: 'ELBv2',
  type: myIngressType,
  contract: myIngressFieldContract,
  probes,
  fixed,
  object: () => ({ admin, ns, name }),
  refused: /immutable|cannot be set, changed or removed/,
});
