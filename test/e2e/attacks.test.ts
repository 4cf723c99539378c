// The attack suite: what a second team tries against a first team's AWS resources, with
// `skylift run` as a process serving both namespaces under their TeamPolicies, AWS behind the
// fault proxy. Each attack must be refused with the exact message shown (Forbidden from the
// policy, or the refusal Skylift makes whatever the policy says) and make no AWS write at all.
// Grows with every new field: add the attack to `attacks` with the message the user sees.
import { randomBytes } from 'node:crypto';
import { ACMClient, RequestCertificateCommand } from '@aws-sdk/client-acm';
import {
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import {
  CreateSecurityGroupCommand,
  CreateTagsCommand,
  DescribeVpcsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateDBInstanceCommand, CreateDBSnapshotCommand, RDSClient } from '@aws-sdk/client-rds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcePath } from '../../src/apis/meta.ts';
import { ownershipTagKeys } from '../../src/apis/managed.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';
import { createZone, route53At } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { applyTeamPolicy, deleteTeamPolicies, policySelector } from '../../dev/teamPolicies.ts';

const group = 'e2e-attacks';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let operator: SkyliftProcess;
let victim: string;
let attacker: string;
let stranger: string;
let zone: string;
let victimDb: string;
let victimSnapshot: string;
let victimGroup: string;
let ownGroup: string;
let victimCertificate: string;
let writes: AwsCall[] = [];

/** AWS operations that change nothing. */
const isRead = (op: string): boolean => /^(Describe|List|Get)/.test(op);

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  victim = await newNamespace(admin, 'atk-admin');
  attacker = await newNamespace(admin, 'atk-payments');
  stranger = await newNamespace(admin, 'atk-stranger');
  const endpoint = stackInfo().awsEndpoint;
  zone = `atk-${randomBytes(3).toString('hex')}.example`;
  await createZone(route53At(endpoint), zone);
  // The victim team's resources, as Skylift made them for namespace `victim` (its ownership tags).
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  await ensureElbSubnets(ec2, 'us-east-1');
  const vpc = (await ec2.send(new DescribeVpcsCommand({}))).Vpcs?.[0]?.VpcId ?? '';
  victimGroup =
    (
      await ec2.send(
        new CreateSecurityGroupCommand({ GroupName: `${victim}-lb`, Description: 'admin', VpcId: vpc }),
      )
    ).GroupId ?? '';
  await ec2.send(new CreateTagsCommand({ Resources: [victimGroup], Tags: [{ Key: 'team', Value: victim }] }));
  ownGroup =
    (
      await ec2.send(
        new CreateSecurityGroupCommand({ GroupName: `${attacker}-lb`, Description: 'payments', VpcId: vpc }),
      )
    ).GroupId ?? '';
  await ec2.send(new CreateTagsCommand({ Resources: [ownGroup], Tags: [{ Key: 'team', Value: attacker }] }));
  ec2.destroy();
  const acm = new ACMClient(awsClientConfig(endpoint));
  victimCertificate =
    (
      await acm.send(
        new RequestCertificateCommand({
          DomainName: `admin.${zone}`,
          Tags: [{ Key: 'team', Value: victim }],
        }),
      )
    ).CertificateArn ?? '';
  acm.destroy();
  const rds = new RDSClient(awsClientConfig(endpoint));
  const owner = [
    { Key: ownershipTagKeys.cluster, Value: 'default' },
    { Key: ownershipTagKeys.owner, Value: `${victim}/db` },
    { Key: ownershipTagKeys.uid, Value: 'victim-uid' },
  ];
  victimDb = `${victim}-db`;
  await rds.send(
    new CreateDBInstanceCommand({
      DBInstanceIdentifier: victimDb,
      Engine: 'postgres',
      DBInstanceClass: 'db.t3.micro',
      AllocatedStorage: 20,
      MasterUsername: 'app',
      MasterUserPassword: 'victim-password-1',
      Tags: owner,
    }),
  );
  victimSnapshot = `${victim}-db-final`;
  await rds.send(
    new CreateDBSnapshotCommand({
      DBInstanceIdentifier: victimDb,
      DBSnapshotIdentifier: victimSnapshot,
      Tags: owner,
    }),
  );
  rds.destroy();

  await applyTeamPolicy(admin, group, `${victim}-admin`, {
    namespaces: { names: [victim] },
    guardrails: { dnsRecords: { zones: [{ name: zone }], names: [`admin.${zone}`] } },
  });
  await applyTeamPolicy(admin, group, `${attacker}-payments`, {
    namespaces: { names: [attacker] },
    guardrails: {
      dnsRecords: { zones: [{ name: zone }], names: [`payments.${zone}`] },
      loadBalancers: {
        schemes: ['internal'],
        securityGroups: { tags: { team: attacker } },
        certificates: {
          arns: ['arn:aws:acm:us-east-1:222233334444:certificate/*'],
          tags: { team: attacker },
        },
      },
      databases: { engines: ['postgres'], instanceClasses: ['db.t3.*'], maxAllocatedStorageGiB: 100 },
    },
  });
  proxy = await startFaultProxy();
  proxy.watch((call) => {
    if (!isRead(call.operation) && call.service !== 'moto') writes.push(call);
  });
  operator = spawnSkylift(`${victim},${attacker},${stranger}`, proxy.endpoint, [
    '--team-policy-selector',
    policySelector(group),
    '--route53-batch-window',
    '100ms',
    '--rds-poll-interval',
    '1s',
  ]);
  const op = operator;
  await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start its controllers',
  });
});

afterAll(async () => {
  await operator.stop();
  await deleteTeamPolicies(admin, group);
  await proxy.stop();
});

interface Attack {
  readonly what: string;
  /** The object the attacker applies (in its namespace unless `namespace` says otherwise). */
  readonly kind: 'DNSRecord' | 'MyIngress' | 'ManagedDB';
  readonly spec: () => Record<string, unknown>;
  readonly namespace?: () => string;
  readonly reason: 'Forbidden' | 'Terminal';
  readonly message: () => string | RegExp;
}

const plural = { DNSRecord: 'dnsrecords', MyIngress: 'myingresses', ManagedDB: 'manageddbs' } as const;
const a = (name: string) => ({ zoneName: zone, name, type: 'A', records: ['192.0.2.66'] });
const http = [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }];
const db = (over: Record<string, unknown>) => ({
  engine: 'postgres',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  finalSnapshot: { enabled: false },
  ...over,
});
const namesFix =
  'the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names';
const adoptionFix =
  'delete this object and create it without spec.externalName so Skylift creates its own resource, or ask the platform team to set spec.guardrails.adoption: Allowed';

const attacks: readonly Attack[] = [
  {
    what: 'a new name under another team’s host',
    kind: 'DNSRecord',
    spec: () => a('login.admin'),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.name: login.admin.${zone} is not within the names this namespace may write (payments.${zone}); ${namesFix}`,
  },
  {
    what: 'a wildcard over another team’s host',
    kind: 'DNSRecord',
    spec: () => a('*.admin'),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.name: *.admin.${zone} is not within the names this namespace may write (payments.${zone}); ${namesFix}`,
  },
  {
    what: 'a DNS-01 challenge for another team’s host',
    kind: 'DNSRecord',
    spec: () => ({ zoneName: zone, name: '_acme-challenge.admin', type: 'TXT', records: ['token'] }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.name: _acme-challenge.admin.${zone} is not within the names this namespace may write (payments.${zone}); ${namesFix}`,
  },
  {
    what: 'an NS delegation of a subdomain to an outside name server',
    kind: 'DNSRecord',
    spec: () => ({ zoneName: zone, name: 'ext.payments', type: 'NS', records: ['ns1.attacker.example.net'] }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.type: an NS record at ext.payments.${zone} delegates a subdomain to other name servers, which this namespace may not do (spec.guardrails.dnsRecords.delegations is not Allowed); delete this DNSRecord, or ask the platform team to set spec.guardrails.dnsRecords.delegations: Allowed`,
  },
  {
    what: 'adopting another team’s record through spec.externalName',
    kind: 'DNSRecord',
    spec: () => ({ ...a(`www.admin.${zone}.`), externalName: `www.admin.${zone}/A` }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.externalName: adopting or observing an existing AWS resource (www.admin.${zone}/A) is not allowed in namespace ${attacker} (spec.guardrails.adoption is not Allowed); ${adoptionFix}`,
  },
  {
    what: 'an internet-facing load balancer where only internal ones are allowed',
    kind: 'MyIngress',
    spec: () => ({
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      scheme: 'internet-facing',
      listeners: http,
    }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.scheme: internet-facing load balancers are not allowed in this namespace (allowed: internal); the scheme is fixed at create: delete this MyIngress and create it with spec.scheme: internal, or ask the platform team to add internet-facing to spec.guardrails.loadBalancers.schemes`,
  },
  {
    what: 'another team’s security group',
    kind: 'MyIngress',
    spec: () => ({
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      scheme: 'internal',
      securityGroups: [victimGroup],
      listeners: http,
    }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.securityGroups: ${victimGroup} is not among the security groups this namespace may use (tagged team=${attacker}); use allowed security groups, or ask the platform team to allow these in spec.guardrails.loadBalancers.securityGroups`,
  },
  {
    what: 'another account’s certificate',
    kind: 'MyIngress',
    spec: () => ({
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      scheme: 'internal',
      securityGroups: [ownGroup],
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/admin',
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.listeners[0].certificateArn: certificate arn:aws:acm:us-east-1:111122223333:certificate/admin is not among the certificates this namespace may use (arn:aws:acm:us-east-1:222233334444:certificate/*; tagged team=${attacker}); use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates`,
  },
  {
    what: 'another team’s certificate, in the same account (its ACM tags say whose)',
    kind: 'MyIngress',
    spec: () => ({
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      scheme: 'internal',
      securityGroups: [ownGroup],
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: victimCertificate,
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.listeners[0].certificateArn: certificate ${victimCertificate} is not among the certificates this namespace may use (arn:aws:acm:us-east-1:222233334444:certificate/*; tagged team=${attacker}); use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates`,
  },
  {
    what: 'a load balancer in a managed security group where groups are limited and inbound CIDRs are not',
    kind: 'MyIngress',
    spec: () => ({
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      scheme: 'internal',
      listeners: http,
    }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.securityGroups: a load balancer without spec.securityGroups gets a security group Skylift manages, and this namespace’s TeamPolicy limits security groups without saying which CIDRs a managed one may let in (loadBalancers.inboundCIDRs); set spec.securityGroups to allowed groups (tagged team=${attacker}), or ask the platform team to set spec.guardrails.loadBalancers.inboundCIDRs`,
  },
  {
    what: 'restoring another team’s snapshot (their data)',
    kind: 'ManagedDB',
    spec: () => db({ restoreFrom: { snapshotIdentifier: victimSnapshot } }),
    reason: 'Terminal',
    message: () =>
      new RegExp(
        `spec\\.restoreFrom\\.snapshotIdentifier "${victimSnapshot}" belongs to namespace ${victim}: a ManagedDB restores only snapshots Skylift made for its own namespace \\(${attacker}\\)`,
      ),
  },
  {
    what: 'a database with a public address',
    kind: 'ManagedDB',
    spec: () => db({ publiclyAccessible: true }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.publiclyAccessible: databases with a public address are not allowed in this namespace (spec.guardrails.databases.publicAccess is not Allowed); set spec.publiclyAccessible: false (reach the database from inside the VPC), or ask the platform team to allow public access`,
  },
  {
    what: 'an instance class outside the budget',
    kind: 'ManagedDB',
    spec: () => db({ instanceClass: 'db.r6g.16xlarge' }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.instanceClass: db.r6g.16xlarge is not among the instance classes this namespace may use (db.t3.*); set spec.instanceClass to an allowed class, or ask the platform team to add it to spec.guardrails.databases.instanceClasses`,
  },
  {
    what: 'observing another team’s database (its endpoint and secret) with ObserveOnly',
    kind: 'ManagedDB',
    spec: () => db({ managementPolicy: 'ObserveOnly', externalName: victimDb }),
    reason: 'Forbidden',
    message: () =>
      `TeamPolicy ${attacker}-payments forbids spec.externalName: adopting or observing an existing AWS resource (${victimDb}) is not allowed in namespace ${attacker} (spec.guardrails.adoption is not Allowed); ${adoptionFix}`,
  },
  {
    what: 'anything from a namespace no policy selects',
    kind: 'DNSRecord',
    namespace: () => stranger,
    spec: () => a('www.payments'),
    reason: 'Forbidden',
    message: () =>
      new RegExp(
        `^namespace ${stranger} is not selected by any TeamPolicy; once a TeamPolicy exists Skylift serves only the namespaces one selects: ask the platform team to add ${stranger} to a TeamPolicy's spec.namespaces$`,
      ),
  },
];

/** The REST paths of a MyIngress and its collection. */
function myIngressResource(namespace: string, name: string): { collection: string; object: string } {
  const type = {
    group: 'aws.skylift.dev',
    version: 'v1alpha1',
    plural: 'myingresses',
    kind: 'MyIngress',
    namespaced: true,
  };
  return { collection: resourcePath(type, { namespace }), object: resourcePath(type, { namespace, name }) };
}

interface Reported {
  metadata: { finalizers?: string[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('attacks from a second team', () => {
  it('are each refused with a message naming the policy and the field, and make no AWS write', async () => {
    writes = [];
    for (const [i, atk] of attacks.entries()) {
      const ns = atk.namespace?.() ?? attacker;
      await admin.create(
        resourcePath(
          {
            group: 'aws.skylift.dev',
            version: 'v1alpha1',
            plural: plural[atk.kind],
            kind: atk.kind,
            namespaced: true,
          },
          { namespace: ns },
        ),
        {
          apiVersion: 'aws.skylift.dev/v1alpha1',
          kind: atk.kind,
          metadata: { name: `attack-${i}` },
          spec: atk.spec(),
        },
      );
    }
    for (const [i, atk] of attacks.entries()) {
      const ns = atk.namespace?.() ?? attacker;
      const path = resourcePath(
        {
          group: 'aws.skylift.dev',
          version: 'v1alpha1',
          plural: plural[atk.kind],
          kind: atk.kind,
          namespaced: true,
        },
        { namespace: ns, name: `attack-${i}` },
      );
      const synced = await waitFor(
        async () => {
          const got = await admin.get<Reported>(path);
          const c = got.status?.conditions?.find((x) => x.type === 'Synced');
          return c?.status === 'False' && c.reason === atk.reason ? c : undefined;
        },
        { timeoutMs: 30_000, description: `${atk.what}: Synced=False ${atk.reason}` },
      );
      const want = atk.message();
      if (typeof want === 'string') expect(synced.message, atk.what).toBe(want);
      else expect(synced.message, atk.what).toMatch(want);
    }
    // Not one AWS write for any of them (reads — zone, subnet and snapshot lookups — only).
    expect(writes.map((w) => `${w.service} ${w.operation}`)).toEqual([]);
  });

  it('never puts an address from a hand-made EndpointSlice (another team’s Pod IP) behind the team’s load balancer', async () => {
    const core = (plural: string) => `/api/v1/namespaces/${attacker}/${plural}`;
    await admin.create(core('services'), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'web' } },
    });
    // The team's own Pod, as the EndpointSlice controller would list it…
    const slice = (name: string, manager: string, address: string) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': manager },
      },
      addressType: 'IPv4',
      ports: [{ name: '', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    });
    await admin.create(
      `/apis/discovery.k8s.io/v1/namespaces/${attacker}/endpointslices`,
      slice('web-own', 'endpointslice-controller.k8s.io', '10.77.1.10'),
    );
    // …and a hand-made one naming the victim's Pod IP.
    await admin.create(
      `/apis/discovery.k8s.io/v1/namespaces/${attacker}/endpointslices`,
      slice('web-steal', 'attacker', '10.77.1.99'),
    );
    const ing = myIngressResource(attacker, 'web');
    await admin.create(ing.collection, {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'web' },
      spec: {
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        scheme: 'internal',
        securityGroups: [ownGroup],
        listeners: [
          { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
        ],
      },
    });
    const arn = await waitFor(
      async () => {
        const got = await admin.get<
          Reported & { status?: { targetGroups?: { arn: string; registeredTargets?: number }[] } }
        >(ing.object);
        const tg = got.status?.targetGroups?.[0];
        return tg?.registeredTargets === 1 ? tg.arn : undefined;
      },
      { timeoutMs: 60_000, description: 'the MyIngress with one registered target' },
    );
    const elb = new ElasticLoadBalancingV2Client(awsClientConfig(stackInfo().awsEndpoint));
    const health = await elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
    elb.destroy();
    expect(health.TargetHealthDescriptions?.map((t) => t.Target?.Id)).toEqual(['10.77.1.10']);
    // Leave the shared emulator as it was (other files count target groups named like this one's).
    await admin.delete(ing.object);
    await waitFor(
      async () => {
        const left = await admin.get<{ items: { metadata: { name: string } }[] }>(ing.collection);
        return left.items.some((m) => m.metadata.name === 'web') ? undefined : true;
      },
      { timeoutMs: 60_000, description: 'the MyIngress and its load balancer deleted' },
    );
  });

  it('leaves the team its own names: a record under its domain becomes Ready', async () => {
    await admin.create(
      resourcePath(
        {
          group: 'aws.skylift.dev',
          version: 'v1alpha1',
          plural: 'dnsrecords',
          kind: 'DNSRecord',
          namespaced: true,
        },
        { namespace: attacker },
      ),
      {
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'DNSRecord',
        metadata: { name: 'legit' },
        spec: a('api.payments'),
      },
    );
    await waitFor(
      async () => {
        const got = await admin.get<Reported>(
          resourcePath(
            {
              group: 'aws.skylift.dev',
              version: 'v1alpha1',
              plural: 'dnsrecords',
              kind: 'DNSRecord',
              namespaced: true,
            },
            { namespace: attacker, name: 'legit' },
          ),
        );
        return got.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, description: 'the legitimate record Ready' },
    );
    // The write watch sees writes (the empty list above is not a deaf proxy).
    expect(writes.map((w) => w.operation)).toContain('ChangeResourceRecordSets');
  });
});
