// TeamPolicy guardrails at admission, on the real kube-apiserver: the chart's
// ValidatingAdmissionPolicies and bindings (paramRef selecting only this file's TeamPolicies) refuse
// what a namespace's policy forbids with the reconcile's words, admit what it allows and everything
// in namespaces it does not select, never refuse a delete or the operator's own requests, and refuse
// another identity's update once the policy tightens. No operator runs: admission only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { admissionPolicies } from '../../src/kinds/registry.ts';
import { helmTemplate } from '../../tools/chart.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl, type KubectlResult } from '../../dev/kubectl.ts';
import { stackInfo } from '../support/stack.ts';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}
interface PolicyStatus {
  metadata: { generation: number };
  status?: {
    observedGeneration?: number;
    typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] };
  };
}

const admin = (): string => stackInfo().adminKubeconfig;
const policyLabel = { 'skylift.test/policies': 'admission' };
const group = 'aws.skylift.dev/v1alpha1';

let releaseNs: string;
let release: string;
/** Selected by name. */
let nsA: string;
/** Selected by label. */
let nsB: string;
/** Carries the team label but also tier=sandbox, which the selector's NotIn excludes. */
let nsSandbox: string;
/** Selected by no policy. */
let nsOther: string;
/** Selected by name by a policy limiting what managed security groups let in. */
let nsC: string;
let byCidrs: string;
let suffix: string;
let byName: string;
let byLabel: string;
let rendered: Manifest[] = [];

async function apply(ns: string, m: Manifest, as?: string): Promise<KubectlResult> {
  return kubectl(
    admin(),
    [
      'apply',
      '--server-side',
      '--field-manager=skylift-test',
      '-n',
      ns,
      ...(as !== undefined ? [`--as=${as}`] : []),
      '-f',
      '-',
    ],
    stringify(m),
  );
}

/** kubectl's exact refusal (server-side apply, annotate, label) by the kind's admission policy. */
function refusal(m: Manifest, message: string): string {
  const plural = `${m.kind.toLowerCase()}${m.kind === 'MyIngress' ? 'es' : 's'}`;
  const policy = `${release}-${plural}`;
  return `Error from server (Forbidden): ${plural}.aws.skylift.dev "${m.metadata.name}" is forbidden: ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ${message}\n`;
}

async function expectRefused(ns: string, m: Manifest, message: string): Promise<void> {
  const r = await apply(ns, m);
  expect(r.stderr).toBe(refusal(m, message));
  expect(r.code).toBe(1);
}

async function expectAdmitted(ns: string, m: Manifest): Promise<void> {
  const r = await apply(ns, m);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
}

const dns = (name: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: group,
  kind: 'DNSRecord',
  metadata: { name },
  spec: { type: 'A', records: ['192.0.2.10'], ...spec },
});
const listener = (port: number, certificateArn?: string) =>
  certificateArn !== undefined
    ? { port, protocol: 'HTTPS', certificateArn, defaultAction: { fixedResponse: { statusCode: 200 } } }
    : { port, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } };
const ingress = (name: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: group,
  kind: 'MyIngress',
  metadata: { name },
  spec: {
    scheme: 'internal',
    subnets: ['subnet-0a1', 'subnet-0b2'],
    securityGroups: ['sg-0a1'],
    listeners: [listener(80)],
    ...spec,
  },
});
const db = (name: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: group,
  kind: 'ManagedDB',
  metadata: { name },
  spec: {
    engine: 'postgres',
    instanceClass: 'db.t4g.micro',
    allocatedStorage: 20,
    masterUsername: 'app',
    // Within team A's network (the others' policies do not limit it).
    vpcSecurityGroupIds: ['sg-0aa'],
    subnetGroupName: 'team-a-db',
    ...spec,
  },
});

/** The web ACLs team B's load balancers may use (and its internet-facing ones must). */
const teamBAcls = 'arn:aws:wafv2:us-east-1:111122223333:regional/webacl/b-*';

function teamPolicy(name: string, spec: Record<string, unknown>): Manifest {
  return { apiVersion: group, kind: 'TeamPolicy', metadata: { name, labels: policyLabel }, spec };
}

const guardrailsA = {
  dnsRecords: { zones: [{ name: 'example.com' }], names: ['payments.example.com'] },
  loadBalancers: {
    schemes: ['internal'],
    subnets: { ids: ['subnet-0a1', 'subnet-0b2'] },
    securityGroups: { ids: ['sg-0a1'] },
    certificates: { arns: ['arn:aws:acm:us-east-1:111122223333:certificate/team-a-*'] },
    accessLogBuckets: ['team-a-logs*'],
  },
  databases: {
    engines: ['postgres'],
    instanceClasses: ['db.t4g.*', 'db.m5.large'],
    maxAllocatedStorageGiB: 100,
    securityGroupIds: ['sg-0aa'],
    subnetGroups: ['team-a-*'],
    storageTypes: ['gp3', 'gp2'],
    maxIops: 3000,
    multiAZ: 'Forbidden',
    maxBackupRetentionDays: 14,
    maxScheduledSnapshots: 10,
  },
};

beforeAll(async () => {
  const client = kubeClient();
  await installCrds(client);
  releaseNs = await newNamespace(client, 'skylift-admission');
  release = releaseNs; // contains the chart name: the chart uses it as its full name
  suffix = releaseNs.slice(-6);
  nsA = await newNamespace(client, 'adm-a');
  nsB = await newNamespace(client, 'adm-b');
  nsSandbox = await newNamespace(client, 'adm-sandbox');
  nsOther = await newNamespace(client, 'adm-other');
  nsC = await newNamespace(client, 'adm-c');
  const team = `b-${suffix}`;
  for (const [ns, labels] of [
    [nsB, [`skylift.test/team=${team}`]],
    [nsSandbox, [`skylift.test/team=${team}`, 'skylift.test/tier=sandbox']],
  ] as const) {
    const r = await kubectl(admin(), ['label', 'namespace', ns, ...labels]);
    expect(r.code, r.stderr).toBe(0);
  }
  byName = `admission-names-${suffix}`;
  byLabel = `admission-labels-${suffix}`;
  byCidrs = `admission-cidrs-${suffix}`;
  for (const p of [
    teamPolicy(byCidrs, {
      namespaces: { names: [nsC] },
      guardrails: { loadBalancers: { securityGroups: { ids: ['sg-0a1'] }, inboundCIDRs: ['10.0.0.0/8'] } },
    }),
    teamPolicy(byName, { namespaces: { names: [nsA] }, guardrails: guardrailsA }),
    teamPolicy(byLabel, {
      namespaces: {
        selector: {
          matchLabels: { 'skylift.test/team': team },
          matchExpressions: [
            { key: 'skylift.test/tier', operator: 'NotIn', values: ['sandbox'] },
            { key: 'skylift.test/team', operator: 'Exists' },
            { key: 'skylift.test/team', operator: 'In', values: [team, 'other'] },
            { key: 'skylift.test/retired', operator: 'DoesNotExist' },
          ],
        },
      },
      guardrails: {
        adoption: 'Allowed',
        dnsRecords: { zones: [{ id: 'Z0ALLOWED' }] },
        loadBalancers: {
          securityGroups: { tags: { team: 'b' } },
          subnets: { tags: { tier: 'private' } },
          certificates: { arns: ['arn:aws:acm:us-east-1:111122223333:certificate/b-1'], tags: { team: 'b' } },
          webAcls: { requiredOnInternetFacing: true, arns: [teamBAcls] },
        },
        databases: {},
      },
    }),
  ]) {
    const r = await kubectl(admin(), ['apply', '-f', '-'], stringify(p));
    expect(r.code, r.stderr).toBe(0);
  }

  rendered = parseAllDocuments(
    await helmTemplate({ release, namespace: releaseNs, values: { teamPolicySelector: policyLabel } }),
  )
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null && m.kind.startsWith('ValidatingAdmissionPolicy'));
  const applied = await kubectl(
    admin(),
    ['apply', '--server-side', '-f', '-'],
    rendered.map((m) => stringify(m)).join('---\n'),
  );
  expect(applied.code, applied.stderr).toBe(0);

  // The apiserver starts enforcing a new policy and binding a moment after they are stored: wait
  // until a request it must refuse is refused (a server-side dry run: nothing is created).
  const probes: Manifest[] = [
    dns('probe', { zoneName: 'example.org', name: 'www' }),
    ingress('probe', { scheme: 'internet-facing' }),
    db('probe', { engine: 'mysql' }),
  ];
  for (const probe of probes) {
    await waitFor(
      async () => {
        const r = await kubectl(
          admin(),
          ['create', '--dry-run=server', '-n', nsA, '-f', '-'],
          stringify(probe),
        );
        return r.stderr.includes('denied request: TeamPolicy') ? true : undefined;
      },
      { timeoutMs: 30_000, description: `${probe.kind} admission policy enforced` },
    );
  }
}, 120_000);

afterAll(async () => {
  // Cluster-scoped, shared with the other test files: remove what this file made.
  const names = rendered.map((m) => m.metadata.name);
  if (names.length > 0) {
    await kubectl(admin(), [
      'delete',
      'validatingadmissionpolicybinding,validatingadmissionpolicy',
      ...[...new Set(names)],
      '--ignore-not-found',
    ]);
  }
  await kubectl(admin(), [
    'delete',
    'teampolicy',
    '-l',
    'skylift.test/policies=admission',
    '--ignore-not-found',
  ]);
  await kubectl(admin(), [
    'delete',
    'namespace',
    releaseNs,
    nsA,
    nsB,
    nsSandbox,
    nsOther,
    nsC,
    '--ignore-not-found',
    '--wait=false',
  ]);
});

describe('the chart’s ValidatingAdmissionPolicies', () => {
  it('type-check against the CRD schemas without warnings, one per kind with its binding', async () => {
    const kinds = admissionPolicies().map((p) => p.resource);
    expect(kinds).not.toEqual([]);
    expect(rendered.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      [
        ...kinds.map((p) => `ValidatingAdmissionPolicy/${release}-${p}`),
        ...kinds.map((p) => `ValidatingAdmissionPolicyBinding/${release}-${p}`),
      ].sort(),
    );
    for (const p of kinds) {
      const status = await waitFor(
        async () => {
          const r = await kubectl(admin(), [
            'get',
            'validatingadmissionpolicy',
            `${release}-${p}`,
            '-o',
            'json',
          ]);
          const vap = JSON.parse(r.stdout) as PolicyStatus;
          return vap.status?.observedGeneration === vap.metadata.generation &&
            vap.status.typeChecking !== undefined
            ? vap.status
            : undefined;
        },
        { timeoutMs: 60_000, description: `type checking of ${release}-${p}` },
      );
      expect(status.typeChecking?.expressionWarnings ?? []).toEqual([]);
    }
  });
});

describe('DNSRecord', () => {
  it('refuses adoption, another zone, another name and a delegation, in the reconcile’s words', async () => {
    await expectRefused(
      nsA,
      dns('adopt', {
        zoneName: 'example.com',
        name: 'api.payments',
        externalName: 'api.payments.example.com/A',
      }),
      `TeamPolicy ${byName} forbids spec.externalName: adopting or observing an existing AWS resource (api.payments.example.com/A) is not allowed in namespace ${nsA} (spec.guardrails.adoption is not Allowed); delete this object and create it without spec.externalName so Skylift creates its own resource, or ask the platform team to set spec.guardrails.adoption: Allowed`,
    );
    await expectRefused(
      nsA,
      dns('other-zone', { zoneName: 'Example.ORG.', name: 'www' }),
      `TeamPolicy ${byName} forbids spec.zoneName: hosted zone example.org is not among the zones this namespace may write (example.com); the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones`,
    );
    for (const [name, fqdn] of [
      ['www', 'www.example.com'],
      ['admin.example.com.', 'admin.example.com'],
      ['@', 'example.com'],
      ['xpayments.example.com', 'xpayments.example.com'],
    ] as const) {
      await expectRefused(
        nsA,
        dns('other-name', { zoneName: 'example.com', name }),
        `TeamPolicy ${byName} forbids spec.name: ${fqdn} is not within the names this namespace may write (payments.example.com); the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names`,
      );
    }
    const delegation = `forbids spec.type: an NS record at team.payments.example.com delegates a subdomain to other name servers, which this namespace may not do (spec.guardrails.dnsRecords.delegations is not Allowed); delete this DNSRecord, or ask the platform team to set spec.guardrails.dnsRecords.delegations: Allowed`;
    await expectRefused(
      nsA,
      dns('delegate', {
        zoneName: 'example.com',
        name: 'team.payments',
        type: 'NS',
        records: ['ns1.example.net'],
      }),
      `TeamPolicy ${byName} ${delegation}`,
    );
    // Selected by label: zones by ID (a zone by name cannot be decided here), but the delegation can.
    await expectRefused(
      nsB,
      dns('delegate', {
        zoneName: 'example.com',
        name: 'team.payments.example.com',
        type: 'NS',
        records: ['ns1.example.net'],
      }),
      `TeamPolicy ${byLabel} ${delegation}`,
    );
    await expectRefused(
      nsB,
      dns('other-zone-id', { zoneId: '/hostedzone/Z0OTHER', name: 'www.example.com.' }),
      `TeamPolicy ${byLabel} forbids spec.zoneId: hosted zone Z0OTHER is not among the zones this namespace may write (Z0ALLOWED); the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones`,
    );
  });

  it('admits allowed records, what only Route 53 can decide, and anything in namespaces no policy selects', async () => {
    await expectAdmitted(nsA, dns('api', { zoneName: 'example.com', name: 'api.payments' }));
    await expectAdmitted(nsA, dns('wild', { zoneName: 'EXAMPLE.com', name: '*.payments.example.com.' }));
    await expectAdmitted(
      nsA,
      dns('acme', { zoneName: 'example.com', name: '_acme-challenge.payments', type: 'TXT', records: ['x'] }),
    );
    // By ID in a policy that names zones by name: the zone's name needs Route 53.
    await expectAdmitted(nsA, dns('by-id', { zoneId: 'Z0ANY', name: 'api.payments' }));
    // Adoption allowed; an NS at the apex; an NS in a zone known by ID only; the allowed zone ID.
    await expectAdmitted(
      nsB,
      dns('adopted', { zoneId: '/hostedzone/Z0ALLOWED', name: 'www.example.net.', externalName: 'x' }),
    );
    await expectAdmitted(
      nsB,
      dns('apex-ns', { zoneName: 'example.com', name: '@', type: 'NS', records: ['ns1.example.net'] }),
    );
    await expectAdmitted(
      nsB,
      dns('ns-by-id', {
        zoneId: 'Z0ALLOWED',
        name: 'team.example.com.',
        type: 'NS',
        records: ['ns1.example.net'],
      }),
    );
    for (const ns of [nsSandbox, nsOther]) {
      await expectAdmitted(
        ns,
        dns('anything', {
          zoneName: 'example.org',
          name: 'team',
          type: 'NS',
          records: ['ns1.example.net'],
          externalName: 'x',
        }),
      );
    }
  });
});

describe('MyIngress', () => {
  it('refuses a scheme, subnets and security groups not listed, a missing security group and a certificate', async () => {
    await expectRefused(
      nsA,
      ingress('public', { scheme: undefined }),
      `TeamPolicy ${byName} forbids spec.scheme: internet-facing load balancers are not allowed in this namespace (allowed: internal); the scheme is fixed at create: delete this MyIngress and create it with spec.scheme: internal, or ask the platform team to add internet-facing to spec.guardrails.loadBalancers.schemes`,
    );
    await expectRefused(
      nsA,
      ingress('subnets', { subnets: ['subnet-0a1', 'subnet-0ff'] }),
      `TeamPolicy ${byName} forbids spec.subnets: subnet subnet-0ff is not among the subnets this namespace may use (subnet-0a1, subnet-0b2); list allowed subnets in spec.subnets, or ask the platform team to allow these in spec.guardrails.loadBalancers.subnets`,
    );
    await expectRefused(
      nsA,
      ingress('no-groups', { securityGroups: undefined }),
      `TeamPolicy ${byName} forbids spec.securityGroups: a load balancer without spec.securityGroups gets a security group Skylift manages, and this namespace’s TeamPolicy limits security groups without saying which CIDRs a managed one may let in (loadBalancers.inboundCIDRs); set spec.securityGroups to allowed groups (sg-0a1), or ask the platform team to set spec.guardrails.loadBalancers.inboundCIDRs`,
    );
    await expectRefused(
      nsA,
      ingress('groups', { securityGroups: ['sg-0ff', 'sg-0a1', 'sg-0ee'] }),
      `TeamPolicy ${byName} forbids spec.securityGroups: sg-0ff, sg-0ee are not among the security groups this namespace may use (sg-0a1); use allowed security groups, or ask the platform team to allow these in spec.guardrails.loadBalancers.securityGroups`,
    );
    const other = 'arn:aws:acm:us-east-1:111122223333:certificate/team-b-1';
    await expectRefused(
      nsA,
      ingress('certificate', {
        listeners: [
          listener(80),
          listener(443, 'arn:aws:acm:us-east-1:111122223333:certificate/team-a-1'),
          listener(8443, other),
        ],
      }),
      `TeamPolicy ${byName} forbids spec.listeners[2].certificateArn: certificate ${other} is not among the certificates this namespace may use (arn:aws:acm:us-east-1:111122223333:certificate/team-a-*); use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates`,
    );
    // An SNI certificate is checked as the default one, named by its listener and place.
    await expectRefused(
      nsA,
      ingress('sni', {
        listeners: [
          listener(80),
          {
            ...listener(443, 'arn:aws:acm:us-east-1:111122223333:certificate/team-a-1'),
            additionalCertificateArns: ['arn:aws:acm:us-east-1:111122223333:certificate/team-a-2', other],
          },
        ],
      }),
      `TeamPolicy ${byName} forbids spec.listeners[1].additionalCertificateArns[1]: certificate ${other} is not among the certificates this namespace may use (arn:aws:acm:us-east-1:111122223333:certificate/team-a-*); use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates`,
    );
    // Allowed by tag only: the missing group is still decided here.
    await expectRefused(
      nsB,
      ingress('no-groups', { securityGroups: undefined }),
      `TeamPolicy ${byLabel} forbids spec.securityGroups: a load balancer without spec.securityGroups gets a security group Skylift manages, and this namespace’s TeamPolicy limits security groups without saying which CIDRs a managed one may let in (loadBalancers.inboundCIDRs); set spec.securityGroups to allowed groups (tagged team=b), or ask the platform team to set spec.guardrails.loadBalancers.inboundCIDRs`,
    );
  });

  it('refuses a managed security group letting in CIDRs outside the policy’s inboundCIDRs, and admits one within', async () => {
    const fix =
      '; set spec.inboundCIDRs to CIDRs within those, or ask the platform team to allow it in spec.guardrails.loadBalancers.inboundCIDRs';
    await expectRefused(
      nsC,
      ingress('open', { scheme: 'internet-facing', securityGroups: undefined }),
      `TeamPolicy ${byCidrs} forbids spec.inboundCIDRs: without spec.inboundCIDRs the managed security group lets in 0.0.0.0/0 (anywhere: the default for internet-facing), which is not within the CIDRs this namespace’s load balancers may let in (10.0.0.0/8)${fix}`,
    );
    await expectRefused(
      nsC,
      ingress('wide', { securityGroups: undefined, inboundCIDRs: ['10.1.0.0/16', '192.0.2.0/24'] }),
      `TeamPolicy ${byCidrs} forbids spec.inboundCIDRs: 192.0.2.0/24 is not within the CIDRs this namespace’s load balancers may let in (10.0.0.0/8)${fix}`,
    );
    await expectAdmitted(
      nsC,
      ingress('narrow', { securityGroups: undefined, inboundCIDRs: ['10.1.0.0/16'] }),
    );
    // The internal default (the VPC's CIDRs) needs EC2: decided by the reconcile.
    await expectAdmitted(nsC, ingress('vpc', { securityGroups: undefined }));
  });

  it('refuses an internet-facing load balancer without a web ACL it keeps, and a web ACL not allowed (spec.waf)', async () => {
    const required = `TeamPolicy ${byLabel} forbids spec.waf.webAclArn: an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps; set spec.waf.webAclArn to an allowed web ACL (${teamBAcls}) with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing`;
    await expectRefused(nsB, ingress('open', { scheme: 'internet-facing' }), required);
    // An ACL left to others (Firewall Manager) is not one Skylift keeps.
    await expectRefused(
      nsB,
      ingress('left-alone', { scheme: 'internet-facing', waf: { policy: 'LeaveAlone' } }),
      required,
    );
    const other = 'arn:aws:wafv2:us-east-1:111122223333:regional/webacl/other/1';
    await expectRefused(
      nsB,
      ingress('other-acl', { waf: { webAclArn: other } }),
      `TeamPolicy ${byLabel} forbids spec.waf.webAclArn: web ACL ${other} is not among the web ACLs this namespace may use (${teamBAcls}); use an allowed web ACL, or ask the platform team to allow it in spec.guardrails.loadBalancers.webAcls.arns`,
    );
    await expectAdmitted(
      nsB,
      ingress('protected', {
        scheme: 'internet-facing',
        waf: { webAclArn: 'arn:aws:wafv2:us-east-1:111122223333:regional/webacl/b-web/1' },
      }),
    );
    // An internal load balancer needs none; a namespace the policy does not select is not held to it.
    await expectAdmitted(nsB, ingress('private', {}));
    await expectAdmitted(
      nsSandbox,
      ingress('sandbox-open', { scheme: 'internet-facing', securityGroups: undefined }),
    );
  });

  it('admits allowed load balancers, what only EC2 can decide, and unselected namespaces', async () => {
    await expectAdmitted(
      nsA,
      ingress('ok', {
        listeners: [
          {
            ...listener(443, 'arn:aws:acm:us-east-1:111122223333:certificate/team-a-9'),
            additionalCertificateArns: ['arn:aws:acm:us-east-1:111122223333:certificate/team-a-8'],
          },
        ],
      }),
    );
    // A subnet selector needs EC2 to know the subnets.
    await expectAdmitted(
      nsA,
      ingress('selector', { subnets: undefined, subnetSelector: { tags: { tier: 'x' } } }),
    );
    // Allowed by tag: any listed subnet or group needs EC2, any certificate ACM.
    await expectAdmitted(
      nsB,
      ingress('tags', {
        subnets: ['subnet-0ff', 'subnet-0ee'],
        securityGroups: ['sg-0ff'],
        listeners: [listener(443, 'arn:aws:acm:us-east-1:111122223333:certificate/unlisted')],
      }),
    );
    for (const ns of [nsSandbox, nsOther]) {
      await expectAdmitted(ns, ingress('anything', { scheme: 'internet-facing', securityGroups: undefined }));
    }
  });
});

describe('ManagedDB', () => {
  it('refuses an engine, an instance class, storage above the limit and a public address', async () => {
    await expectRefused(
      nsA,
      db('engine', { engine: 'mysql' }),
      `TeamPolicy ${byName} forbids spec.engine: mysql is not among the engines this namespace may use (postgres); the engine is fixed at create: delete this ManagedDB and create it with an allowed engine, or ask the platform team to add it to spec.guardrails.databases.engines`,
    );
    await expectRefused(
      nsA,
      db('class', { instanceClass: 'db.m5.xlarge' }),
      `TeamPolicy ${byName} forbids spec.instanceClass: db.m5.xlarge is not among the instance classes this namespace may use (db.t4g.*, db.m5.large); set spec.instanceClass to an allowed class, or ask the platform team to add it to spec.guardrails.databases.instanceClasses`,
    );
    await expectRefused(
      nsA,
      db('storage', { allocatedStorage: 200 }),
      `TeamPolicy ${byName} forbids spec.allocatedStorage: 200 GiB is more than this namespace's databases may have (100 GiB); set spec.allocatedStorage to at most 100, or ask the platform team to raise spec.guardrails.databases.maxAllocatedStorageGiB`,
    );
    await expectRefused(
      nsA,
      db('autoscaling', { allocatedStorage: 50, maxAllocatedStorage: 500 }),
      `TeamPolicy ${byName} forbids spec.maxAllocatedStorage: 500 GiB is more than this namespace's databases may have (100 GiB); set spec.maxAllocatedStorage to at most 100, or ask the platform team to raise spec.guardrails.databases.maxAllocatedStorageGiB`,
    );
    const publicly = `forbids spec.publiclyAccessible: databases with a public address are not allowed in this namespace (spec.guardrails.databases.publicAccess is not Allowed); set spec.publiclyAccessible: false (reach the database from inside the VPC), or ask the platform team to allow public access`;
    await expectRefused(nsA, db('public', { publiclyAccessible: true }), `TeamPolicy ${byName} ${publicly}`);
    await expectRefused(nsB, db('public', { publiclyAccessible: true }), `TeamPolicy ${byLabel} ${publicly}`);
  });

  it('refuses another team’s network and costs beyond the policy (issue 27, item 11), saying what the reconcile says', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'sg',
        { vpcSecurityGroupIds: ['sg-0aa', 'sg-0bb'] },
        'forbids spec.vpcSecurityGroupIds: sg-0bb is not among the security groups this namespace’s databases may be in (sg-0aa); set spec.vpcSecurityGroupIds to allowed groups, or ask the platform team to add them to spec.guardrails.databases.securityGroupIds',
      ],
      [
        'subnets',
        { subnetGroupName: 'team-b-db' },
        'forbids spec.subnetGroupName: team-b-db is not among the DB subnet groups this namespace’s databases may be in (team-a-*); the subnet group is fixed at create: delete this ManagedDB and create it with spec.subnetGroupName set to an allowed group, or ask the platform team to add it to spec.guardrails.databases.subnetGroups',
      ],
      [
        'io2',
        { storageType: 'io2', iops: 3000 },
        'forbids spec.storageType: io2 is not among the storage types this namespace’s databases may use (gp3, gp2); set spec.storageType to an allowed type, or ask the platform team to add it to spec.guardrails.databases.storageTypes',
      ],
      [
        'iops',
        { iops: 12000 },
        'forbids spec.iops: 12000 IOPS are more than this namespace’s databases may provision (3000); set spec.iops to at most 3000, or ask the platform team to raise spec.guardrails.databases.maxIops',
      ],
      [
        'multiaz',
        { multiAZ: true },
        'forbids spec.multiAZ: Multi-AZ databases (a standby in another Availability Zone) are not allowed in this namespace; set spec.multiAZ: false, or ask the platform team to allow spec.guardrails.databases.multiAZ',
      ],
      [
        'retention',
        { backup: { retentionDays: 30 } },
        'forbids spec.backup.retentionDays: 30 days of automated backups are more than this namespace’s databases may keep (14); set spec.backup.retentionDays to at most 14, or ask the platform team to raise spec.guardrails.databases.maxBackupRetentionDays',
      ],
      [
        'snapshots',
        { backup: { snapshotSchedule: '0 3 * * *', keepSnapshots: 30 } },
        'forbids spec.backup.keepSnapshots: keeping 30 scheduled snapshots is more than this namespace’s databases may (10); set spec.backup.keepSnapshots to at most 10, or ask the platform team to raise spec.guardrails.databases.maxScheduledSnapshots',
      ],
    ];
    for (const [name, spec, message] of cases)
      await expectRefused(nsA, db(name, spec), `TeamPolicy ${byName} ${message}`);
    await expectRefused(
      nsA,
      ingress('logs', { attributes: { accessLogs: { bucket: 'team-b-logs' } } }),
      `TeamPolicy ${byName} forbids spec.attributes.accessLogs.bucket: team-b-logs is not among the buckets this namespace’s load balancers may write access logs to (team-a-logs*); name an allowed bucket, or ask the platform team to add it to spec.guardrails.loadBalancers.accessLogBuckets`,
    );
    await expectAdmitted(
      nsA,
      ingress('own-logs', { attributes: { accessLogs: { bucket: 'team-a-logs-1' } } }),
    );
    await expectAdmitted(
      nsA,
      db('within', {
        storageType: 'gp3',
        iops: 3000,
        backup: { retentionDays: 14, snapshotSchedule: '0 3 * * *', keepSnapshots: 10 },
      }),
    );
  });

  it('admits allowed databases and unselected namespaces', async () => {
    await expectAdmitted(
      nsA,
      db('ok', { instanceClass: 'db.t4g.large', allocatedStorage: 50, maxAllocatedStorage: 100 }),
    );
    await expectAdmitted(nsA, db('exact-class', { instanceClass: 'db.m5.large', allocatedStorage: 100 }));
    await expectAdmitted(
      nsB,
      db('any', { engine: 'mariadb', instanceClass: 'db.r6g.large', allocatedStorage: 1000 }),
    );
    for (const ns of [nsSandbox, nsOther]) {
      await expectAdmitted(
        ns,
        db('anything', { engine: 'mysql', allocatedStorage: 5000, publiclyAccessible: true }),
      );
    }
  });
});

describe('a tightened policy', () => {
  it('refuses another identity’s update, never the operator’s, never a delete or a finalizer removal', async () => {
    const record: Manifest = {
      ...dns('tightened', { zoneName: 'example.com', name: 'shop.payments' }),
      metadata: { name: 'tightened', labels: { app: 'shop' } },
    };
    (record.metadata as { finalizers?: string[] }).finalizers = ['aws.skylift.dev/finalizer'];
    await expectAdmitted(nsA, record);

    const tightened = teamPolicy(byName, {
      namespaces: { names: [nsA] },
      guardrails: {
        ...guardrailsA,
        dnsRecords: { ...guardrailsA.dnsRecords, names: ['checkout.example.com'] },
      },
    });
    const r = await kubectl(admin(), ['apply', '-f', '-'], stringify(tightened));
    expect(r.code, r.stderr).toBe(0);
    const forbidden = `TeamPolicy ${byName} forbids spec.name: shop.payments.example.com is not within the names this namespace may write (checkout.example.com); the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names`;
    // The apiserver reads the changed TeamPolicy from its informer: wait until the update is refused.
    let attempt = 0;
    let update = record;
    const refused = await waitFor(
      async () => {
        // A different label each time: every attempt is a real change.
        attempt += 1;
        update = { ...record, metadata: { ...record.metadata, labels: { app: 'shop', try: `${attempt}` } } };
        const u = await apply(nsA, update);
        return u.code !== 0 ? u : undefined;
      },
      { timeoutMs: 30_000, description: 'the update refused under the tightened policy' },
    );
    expect(refused.stderr).toBe(refusal(update, forbidden));

    // The operator's ServiceAccount (impersonated, with the rights it has on its objects) may still
    // write the object, e.g. a status-independent annotation or its finalizer.
    const operator = `system:serviceaccount:${releaseNs}:${release}`;
    const role = await kubectl(admin(), [
      'create',
      'role',
      'skylift-objects',
      '-n',
      nsA,
      '--verb=get,patch,update',
      '--resource=dnsrecords.aws.skylift.dev',
    ]);
    expect(role.code, role.stderr).toBe(0);
    const binding = await kubectl(admin(), [
      'create',
      'rolebinding',
      'skylift-objects',
      '-n',
      nsA,
      '--role=skylift-objects',
      `--serviceaccount=${releaseNs}:${release}`,
    ]);
    expect(binding.code, binding.stderr).toBe(0);
    const annotate = await kubectl(admin(), [
      'annotate',
      '-n',
      nsA,
      'dnsrecord',
      'tightened',
      'skylift.test/seen=yes',
      `--as=${operator}`,
    ]);
    expect(annotate.stderr).toBe('');
    expect(annotate.code).toBe(0);
    // The same change by the admin is refused.
    const byAdmin = await kubectl(admin(), [
      'annotate',
      '-n',
      nsA,
      'dnsrecord',
      'tightened',
      'skylift.test/seen=again',
      '--overwrite',
    ]);
    expect(byAdmin.stderr).toBe(refusal(record, forbidden));
    expect(byAdmin.code).toBe(1);

    // Deleting is never refused; once it is being deleted, removing the finalizer is not either.
    const del = await kubectl(admin(), ['delete', '-n', nsA, 'dnsrecord', 'tightened', '--wait=false']);
    expect(del.stderr).toBe('');
    expect(del.code).toBe(0);
    const unblock = await kubectl(admin(), [
      'patch',
      '-n',
      nsA,
      'dnsrecord',
      'tightened',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    expect(unblock.stderr).toBe('');
    expect(unblock.code).toBe(0);
    const gone = await kubectl(admin(), [
      'get',
      '-n',
      nsA,
      'dnsrecord',
      'tightened',
      '--ignore-not-found',
      '-o',
      'name',
    ]);
    expect(gone.stdout).toBe('');

    // Objects the policy allowed all along are deleted as usual, as are forbidden ones elsewhere.
    const rest = await kubectl(admin(), ['delete', '-n', nsA, 'dnsrecords,myingresses,manageddbs', '--all']);
    expect(rest.stderr).toBe('');
    expect(rest.code).toBe(0);
  });
});

// Issue 27, item 10: with teamPolicyRequired, admission fails closed too: while no TeamPolicy of
// the installation exists, every create and update of its kinds is refused (the bindings'
// parameterNotFoundAction: Deny), and admitted again once one exists.
describe('teamPolicyRequired', () => {
  it('refuses every create while no TeamPolicy exists, and admits once one does', async () => {
    const client = kubeClient();
    const releaseReq = await newNamespace(client, 'skylift-adm-required');
    const nsReq = await newNamespace(client, 'adm-required');
    const label = { 'skylift.test/policies': `admission-required-${suffix}` };
    const required = parseAllDocuments(
      await helmTemplate({
        release: releaseReq,
        namespace: releaseReq,
        // Only this namespace: the other test files' objects are not refused meanwhile.
        values: { teamPolicyRequired: true, teamPolicySelector: label, watchNamespaces: [nsReq] },
      }),
    )
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null && m.kind.startsWith('ValidatingAdmissionPolicy'));
    const record = dns('www', { zoneName: 'example.com', name: 'www' });
    const dryRun = (): Promise<KubectlResult> =>
      kubectl(admin(), ['create', '--dry-run=server', '-n', nsReq, '-f', '-'], stringify(record));
    try {
      const applied = await kubectl(
        admin(),
        ['apply', '--server-side', '-f', '-'],
        required.map((m) => stringify(m)).join('---\n'),
      );
      expect(applied.code, applied.stderr).toBe(0);
      const refused = await waitFor(
        async () => {
          const r = await dryRun();
          return r.code !== 0 ? r : undefined;
        },
        { timeoutMs: 30_000, description: 'a DNSRecord refused while no TeamPolicy exists' },
      );
      expect(refused.stderr).toBe(
        // The apiserver's own words (a configuration failure is Invalid, not Forbidden).
        `The dnsrecords "www" is invalid: : ValidatingAdmissionPolicy '${releaseReq}-dnsrecords' with binding '${releaseReq}-dnsrecords' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction\n`,
      );
      const p = await kubectl(
        admin(),
        ['apply', '-f', '-'],
        stringify({
          ...teamPolicy(`admission-required-${suffix}`, { namespaces: { names: [nsReq] } }),
          metadata: { name: `admission-required-${suffix}`, labels: label },
        }),
      );
      expect(p.code, p.stderr).toBe(0);
      await waitFor(async () => ((await dryRun()).code === 0 ? true : undefined), {
        timeoutMs: 30_000,
        description: 'the DNSRecord admitted once a TeamPolicy exists',
      });
    } finally {
      await kubectl(admin(), [
        'delete',
        'validatingadmissionpolicybinding,validatingadmissionpolicy',
        ...new Set(required.map((m) => m.metadata.name)),
        '--ignore-not-found',
      ]);
      await kubectl(admin(), ['delete', 'teampolicy', `admission-required-${suffix}`, '--ignore-not-found']);
      await kubectl(admin(), [
        'delete',
        'namespace',
        releaseReq,
        nsReq,
        '--ignore-not-found',
        '--wait=false',
      ]);
    }
  });
});
