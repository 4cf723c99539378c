// MyIngressGroup's field contract, generated half (test/support/fieldProbes.ts): every field the
// contract says is applied in AWS is changed after create (and back), and ELBv2 (or EC2, WAFv2)
// shows it on the shared load balancer as soon as the group is Ready and Synced at the new
// generation; every fixed field's change is refused by the apiserver. A group has a load balancer
// only while a member names it: one MyIngress of an admitted namespace, with a rule forwarding to
// a Service (so the load balancer has a target group). The controllers reach moto through a proxy
// making AssociateWebACL replace and ListCertificates answer as AWS's do.
import { ACMClient, DescribeCertificateCommand, RequestCertificateCommand } from '@aws-sdk/client-acm';
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
  ElasticLoadBalancingV2Client,
  type Listener,
  type LoadBalancer,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { CreateWebACLCommand, GetWebACLForResourceCommand, WAFV2Client } from '@aws-sdk/client-wafv2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmListCertificatesAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { wafv2AssociateReplaces } from '../../dev/wafv2Fidelity.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import {
  myIngressGroupFieldContract,
  myIngressGroupType,
  type GroupListenerSpec,
  type MyIngressGroup,
  type MyIngressGroupSpec,
} from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupController } from '../../src/kinds/myingress/group/controller.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { importCertificate, selfSignedCertificate } from '../support/acmCertificates.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import {
  describeFieldContract,
  runProbe,
  waitSettledAtGeneration,
  type FieldProbe,
  type FixedProbe,
} from '../support/fieldProbes.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { myIngressGone, myIngressWhere, readyAtGeneration } from '../support/myingressGroupObjects.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let admin: KubeClient;
let elb: ElasticLoadBalancingV2Client;
let ec2: EC2Client;
const controllers: RunningController[] = [];
/** The member's namespace, labelled `probe-admit: yes`. */
let ns: string;
/** Subnets: two for the spec, two more that only the selector's tag matches. */
let subnets: string[] = [];
let groups: string[] = [];
let certs: string[] = [];
/** Hosts of this run's own domain, each with an ISSUED (imported) certificate: certificateHosts. */
const hostDomain = `${Math.random().toString(16).slice(2, 10)}.group-probe-hosts.example.com`;
const hosts = [`a.${hostDomain}`, `b.${hostDomain}`];
let hostCerts: string[] = [];
let waf: WAFV2Client;
let acm: ACMClient;
/** The domain of the TLS Secret listeners[].certificateRefs names. */
const secretDomain = `${Math.random().toString(16).slice(2, 10)}.group-probe-secret.example.com`;
/** Two REGIONAL WAFv2 web ACLs. */
let webAcls: string[] = [];
let proxy: AwsFaultProxy;
/** The group (cluster-scoped: unique per run) and its member. */
const name = `probed-${Math.random().toString(16).slice(2, 8)}`;
const memberName = 'member';

async function loadBalancer(): Promise<LoadBalancer> {
  const arn = (await readObject<MyIngressGroup>(admin, myIngressGroupType, '', name))?.status?.arn;
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

/** The hosts of the member's rules on the listener on port 80 (none: the member is not admitted). */
async function memberHosts(): Promise<string[]> {
  const l = await listenerOn(80);
  const rs = await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn }));
  return (rs.Rules ?? [])
    .filter((r) => r.IsDefault !== true)
    .flatMap((r) => (r.Conditions ?? []).flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []))
    .sort();
}

const baseListeners = (tls: Partial<GroupListenerSpec> = {}): GroupListenerSpec[] => [
  { port: 80, protocol: 'HTTP' },
  {
    port: 8443,
    protocol: 'HTTPS',
    certificateArn: certs[0] ?? '',
    sslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
    defaultAction: { fixedResponse: { statusCode: 404 } },
    ...tls,
  },
];

const admitted = { from: 'Selector' as const, selector: { matchLabels: { 'probe-admit': 'yes' } } };

const base = (): MyIngressGroupSpec => ({
  subnets: subnets.slice(0, 2),
  scheme: 'internal',
  securityGroups: [groups[0] ?? ''],
  ipAddressType: 'ipv4',
  listeners: baseListeners(),
  allowedNamespaces: admitted,
  attributes: { idleTimeoutSeconds: 60 },
  tags: { team: 'platform' },
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
    [
      { subnets: null, subnetSelector: { tags: { 'group-probe-tier': 'selected' } } },
      subnets.slice(2, 4).sort(),
    ],
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
    [{ listeners: baseListeners() }, [certs[0], []]],
  ),
  probe(
    'listeners[].certificateRefs',
    // The SNI certificates' domain names: the Secret's, imported into ACM, beside certificateArn.
    async () => {
      const names: string[] = [];
      for (const arn of await sniOn(8443)) {
        const d = await acm.send(new DescribeCertificateCommand({ CertificateArn: arn }));
        names.push(d.Certificate?.DomainName ?? '?');
      }
      return names;
    },
    [],
    [
      { listeners: baseListeners({ certificateRefs: [{ namespace: ns, name: 'probe-tls' }] }) },
      [secretDomain],
    ],
    [{ listeners: baseListeners() }, []],
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
    async () =>
      Promise.all(
        [80, 8443].map(async (port) => {
          const a = (await listenerOn(port))?.DefaultActions?.[0];
          return {
            type: a?.Type,
            status: a?.FixedResponseConfig?.StatusCode ?? a?.RedirectConfig?.StatusCode,
          };
        }),
      ),
    // Port 80 names none: a fixed 404.
    [
      { type: 'fixed-response', status: '404' },
      { type: 'fixed-response', status: '404' },
    ],
    [
      {
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: { redirect: { host: 'example.com', statusCode: 'HTTP_302' } },
          },
          baseListeners({ defaultAction: { fixedResponse: { statusCode: 503, body: 'down' } } })[1],
        ],
      },
      [
        { type: 'redirect', status: 'HTTP_302' },
        { type: 'fixed-response', status: '503' },
      ],
    ],
    [
      { listeners: baseListeners() },
      [
        { type: 'fixed-response', status: '404' },
        { type: 'fixed-response', status: '404' },
      ],
    ],
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
      {
        attributes: {
          idleTimeoutSeconds: 120,
          http2: false,
          accessLogs: { bucket: 'group-probe-logs', prefix: 'probe' },
        },
      },
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
    { team: 'platform' },
    [{ tags: { team: 'edge', env: 'prod' } }, { team: 'edge', env: 'prod' }],
    [{ tags: { team: 'platform', env: null } }, { team: 'platform' }],
  ),
  probe(
    'allowedNamespaces',
    memberHosts,
    ['api.example.com'],
    // The member's namespace no longer admitted: its rule leaves the load balancer.
    [{ allowedNamespaces: { from: 'Selector', selector: { matchLabels: { 'probe-admit': 'other' } } } }, []],
    [{ allowedNamespaces: { from: 'All', selector: null } }, ['api.example.com']],
    [{ allowedNamespaces: admitted }, ['api.example.com']],
  ),
];

const fixed: FixedProbe[] = [
  { field: 'scheme', patch: { scheme: 'internet-facing' } },
  { field: 'externalName', patch: { externalName: 'other' } },
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
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.41.0.0/16' }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  subnets = [];
  for (const [i, az] of ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d'].entries()) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.41.${i + 1}.0/24`, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
  await ec2.send(
    new CreateTagsCommand({
      Resources: subnets.slice(2, 4),
      Tags: [{ Key: 'group-probe-tier', Value: 'selected' }],
    }),
  );
  groups = [];
  for (const g of ['group-probe-lb-a', 'group-probe-lb-b']) {
    const out = await ec2.send(
      new CreateSecurityGroupCommand({ GroupName: g, Description: g, VpcId: vpcId }),
    );
    groups.push(out.GroupId ?? '');
  }
  acm = new ACMClient(direct);
  certs = [];
  for (const d of ['a.group-probe.example.com', 'b.group-probe.example.com', 'c.group-probe.example.com']) {
    const out = await acm.send(new RequestCertificateCommand({ DomainName: d }));
    certs.push(out.CertificateArn ?? '');
  }
  hostCerts = [];
  for (const h of hosts) hostCerts.push(await importCertificate(acm, { domain: h }));
  waf = new WAFV2Client(direct);
  webAcls = [];
  for (const n of ['group-probe-acl-a', 'group-probe-acl-b']) {
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
  ns = await newNamespace(admin, 'mingg-contract');
  await admin.patch(`/api/v1/namespaces/${ns}`, { metadata: { labels: { 'probe-admit': 'yes' } } }, 'merge');
  // A TLS Secret for listeners[].certificateRefs (imported into ACM by the group).
  const tls = await selfSignedCertificate({ domain: secretDomain });
  await admin.create(`/api/v1/namespaces/${ns}/secrets`, {
    metadata: { name: 'probe-tls' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(tls.certificatePem).toString('base64'),
      'tls.key': Buffer.from(tls.privateKeyPem).toString('base64'),
    },
  });
  await service('api', '10.41.2.10');
  const opts = { namespace: ns, endpoint: proxy.endpoint };
  controllers.push(await startController((s) => myIngressController(s, { pollMs: 300 }), opts));
  controllers.push(await startController((s) => myIngressGroupController(s, { pollMs: 300 }), opts));
  await admin.create(resourcePath(myIngressGroupType, {}), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngressGroup',
    metadata: { name },
    spec: base(),
  });
  await admin.create<MyIngress>(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: memberName },
    spec: {
      group: { name },
      rules: [
        {
          priority: 10,
          listenerPort: 80,
          hosts: ['api.example.com'],
          action: { forward: { service: { name: 'api', port: 80, healthCheck: { path: '/healthz' } } } },
        },
      ],
    } as MyIngress['spec'],
  });
  await myIngressWhere(admin, ns, memberName, readyAtGeneration, 'Ready');
  await waitSettledAtGeneration(admin, myIngressGroupType, '', name, 'create');
});
afterAll(async () => {
  // A cluster-scoped group outlives the namespace: deleted here, so no later file's group
  // controller (which sees every group) takes it up.
  await admin.delete(resourcePath(myIngressType, { namespace: ns, name: memberName }));
  await myIngressGone(admin, ns, memberName);
  await admin.delete(resourcePath(myIngressGroupType, { name }));
  await waitFor(
    async () => ((await readObject(admin, myIngressGroupType, '', name)) === undefined ? true : undefined),
    { timeoutMs: 60_000, description: `MyIngressGroup ${name} gone` },
  );
  for (const c of controllers.splice(0)) await c.stop();
  await proxy.stop();
  acm.destroy();
});

describeFieldContract({
  kind: 'MyIngressGroup',
  service: 'ELBv2',
  type: myIngressGroupType,
  contract: myIngressGroupFieldContract,
  probes,
  fixed,
  object: () => ({ admin, ns: '', name }),
  refused: /immutable|cannot be set, changed or removed|cannot adopt an existing load balancer/,
});

describe('MyIngressGroup Kubernetes-only fields', () => {
  it('managementPolicy: ObserveOnly stops writes to the shared load balancer, Manage resumes them', async () => {
    const tags = probes().find((p) => p.field === 'tags');
    if (tags === undefined) throw new Error('no tags probe');
    await runProbe(
      admin,
      myIngressGroupType,
      '',
      name,
      {
        ...tags,
        steps: [
          // Observed only: the tag change is accepted in Kubernetes and not made in AWS.
          {
            patch: { managementPolicy: 'ObserveOnly', tags: { team: 'observed' } },
            aws: { team: 'platform' },
          },
          { patch: { managementPolicy: 'Manage' }, aws: { team: 'observed' } },
          { patch: { tags: { team: 'platform' } }, aws: { team: 'platform' } },
        ],
      },
      (what, got, want) => {
        expect(got, what).toEqual(want);
      },
    );
  });
});
