// The MyIngress and ManagedDB sections of a TeamPolicy, checked on specs alone (EC2 lookups stubbed
// per test: this is a unit test of the two guardrail modules).
import { describe, expect, it } from 'vitest';
import type { TeamPolicy } from '../../src/apis/teampolicy.ts';
import type { ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import {
  checkManagedDb,
  classAllowed,
  type DatabaseGuardrails,
} from '../../src/kinds/manageddb/guardrails.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  arnAllowed,
  checkMyIngress,
  type GuardLookups,
  type LoadBalancerGuardrails,
} from '../../src/kinds/myingress/guardrails.ts';
import { ForbiddenError } from '../../src/runtime/errors.ts';

const policy = (guardrails: Record<string, unknown>): TeamPolicy => ({
  metadata: { name: 'search' },
  spec: { namespaces: { names: ['search'] }, guardrails },
});

const tags: Record<string, Record<string, string>> = {
  'subnet-aa': { tier: 'private' },
  'subnet-bb': { tier: 'private' },
  'subnet-cc': { tier: 'public' },
  'sg-11': { team: 'search' },
  'sg-22': { team: 'payments' },
};
const calls: string[] = [];
const ec2: GuardLookups = {
  vpcCidrs: (subnets) => {
    calls.push(`vpc of ${subnets.join(',')}`);
    return Promise.resolve({ cidrs: ['10.20.0.0/16'], ipv6Cidrs: [] });
  },
  subnetTags: (ids) => {
    calls.push(`subnets ${ids.join(',')}`);
    return Promise.resolve(new Map(ids.map((id) => [id, tags[id] ?? {}])));
  },
  securityGroupTags: (ids) => {
    calls.push(`groups ${ids.join(',')}`);
    return Promise.resolve(new Map(ids.map((id) => [id, tags[id] ?? {}])));
  },
  certificateTags: (arn) => {
    calls.push(`certificate ${arn}`);
    return Promise.resolve(arn.endsWith('/mine-tagged') ? { team: 'search' } : {});
  },
  certificateForHost: (host) => {
    calls.push(`host ${host}`);
    return Promise.resolve(
      host === 'unknown.example.com' ? undefined : `arn:aws:acm:us-east-1:111122223333:certificate/${host}`,
    );
  },
  subnetsMatching: (want) => {
    calls.push(`match ${JSON.stringify(want)}`);
    return Promise.resolve(
      Object.keys(tags).filter(
        (id) => id.startsWith('subnet-') && Object.entries(want).every(([k, v]) => tags[id]?.[k] === v),
      ),
    );
  },
};

const ingress = (
  over: Partial<MyIngressSpec> = {},
  without: readonly (keyof MyIngressSpec)[] = [],
): MyIngressSpec => {
  const spec: MyIngressSpec = {
    subnets: ['subnet-aa', 'subnet-bb'],
    securityGroups: ['sg-11'],
    scheme: 'internal',
    listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
    ...over,
  };
  for (const k of without) Reflect.deleteProperty(spec, k);
  return spec;
};

async function lbRefusal(g: LoadBalancerGuardrails, spec: MyIngressSpec): Promise<string | undefined> {
  try {
    await checkMyIngress(policy({ loadBalancers: g }), spec, ec2);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ForbiddenError);
    return (err as Error).message;
  }
}

describe('MyIngress guardrails', () => {
  it('refuses a scheme the policy does not list', async () => {
    expect(await lbRefusal({ schemes: ['internal'] }, ingress({ scheme: 'internet-facing' }))).toBe(
      'TeamPolicy search forbids spec.scheme: internet-facing load balancers are not allowed in this namespace (allowed: internal); the scheme is fixed at create: delete this MyIngress and create it with spec.scheme: internal, or ask the platform team to add internet-facing to spec.guardrails.loadBalancers.schemes',
    );
    expect(await lbRefusal({ schemes: ['internal'] }, ingress())).toBeUndefined();
    // Issue 27, item 11: access logs only into the team's own buckets.
    const logs = (bucket: string): MyIngressSpec => ingress({ attributes: { accessLogs: { bucket } } });
    expect(await lbRefusal({ accessLogBuckets: ['team-a-logs*'] }, logs('team-a-logs-1'))).toBeUndefined();
    expect(await lbRefusal({ accessLogBuckets: ['team-a-logs*'] }, logs('team-b-logs'))).toContain(
      'forbids spec.attributes.accessLogs.bucket: team-b-logs is not among the buckets this namespace’s load balancers may write access logs to (team-a-logs*); name an allowed bucket, or ask the platform team to add it to spec.guardrails.loadBalancers.accessLogBuckets',
    );
    // The CRD defaults scheme to internet-facing; an absent scheme is that.
    expect(await lbRefusal({ schemes: ['internal'] }, ingress({}, ['scheme']))).toMatch(/spec.scheme/);
  });
  it('checks subnets by ID without a lookup, and by tag with one', async () => {
    calls.length = 0;
    expect(await lbRefusal({ subnets: { ids: ['subnet-aa', 'subnet-bb'] } }, ingress())).toBeUndefined();
    expect(calls).toEqual([]);
    expect(
      await lbRefusal({ subnets: { ids: ['subnet-aa'] } }, ingress({ subnets: ['subnet-aa', 'subnet-cc'] })),
    ).toMatch(
      /^TeamPolicy search forbids spec.subnets: subnet subnet-cc is not among the subnets this namespace may use \(subnet-aa\)/,
    );
    expect(
      await lbRefusal(
        { subnets: { tags: { tier: 'private' } } },
        ingress({ subnets: ['subnet-aa', 'subnet-cc'] }),
      ),
    ).toMatch(/subnet subnet-cc is not among the subnets this namespace may use \(tagged tier=private\)/);
    expect(calls).toEqual(['subnets subnet-aa,subnet-cc']);
  });
  it('accepts a selector that demands the allowed tags, and resolves one that does not', async () => {
    calls.length = 0;
    const byTag = { subnets: { tags: { tier: 'private' } } };
    expect(
      await lbRefusal(byTag, ingress({ subnetSelector: { tags: { tier: 'private', x: 'y' } } }, ['subnets'])),
    ).toBeUndefined();
    expect(calls).toEqual([]);
    expect(
      await lbRefusal(
        { subnets: { ids: ['subnet-aa'] } },
        ingress({ subnetSelector: { tags: { tier: 'private' } } }, ['subnets']),
      ),
    ).toMatch(/^TeamPolicy search forbids spec.subnetSelector: subnet subnet-bb is not among/);
  });
  it('refuses another team’s security group, and the VPC default group when groups are limited', async () => {
    expect(await lbRefusal({ securityGroups: { tags: { team: 'search' } } }, ingress())).toBeUndefined();
    expect(
      await lbRefusal(
        { securityGroups: { tags: { team: 'search' } } },
        ingress({ securityGroups: ['sg-22'] }),
      ),
    ).toMatch(
      /forbids spec.securityGroups: sg-22 is not among the security groups this namespace may use \(tagged team=search\)/,
    );
    expect(await lbRefusal({ securityGroups: { ids: ['sg-11'] } }, ingress({}, ['securityGroups']))).toMatch(
      /forbids spec.securityGroups: a load balancer without spec.securityGroups gets a security group Skylift manages, and this namespace’s TeamPolicy limits security groups without saying which CIDRs a managed one may let in/,
    );
    // Saying which CIDRs a managed group may open lets one be managed.
    expect(
      await lbRefusal(
        { securityGroups: { ids: ['sg-11'] }, inboundCIDRs: ['0.0.0.0/0'] },
        ingress({}, ['securityGroups']),
      ),
    ).toBeUndefined();
  });
  it.each([
    {
      reason: 'a CIDR within an allowed one',
      allowed: ['10.0.0.0/8'],
      over: { scheme: 'internal' as const, inboundCIDRs: ['10.1.0.0/16'] },
      refused: undefined,
    },
    {
      reason: 'a CIDR wider than the allowed one',
      allowed: ['10.0.0.0/8'],
      over: { scheme: 'internal' as const, inboundCIDRs: ['10.1.0.0/16', '0.0.0.0/0'] },
      refused:
        /^TeamPolicy search forbids spec.inboundCIDRs: 0.0.0.0\/0 is not within the CIDRs this namespace’s load balancers may let in \(10.0.0.0\/8\); set spec.inboundCIDRs to CIDRs within those/,
    },
    {
      reason: 'the internet-facing default (anywhere) where only the private network is allowed',
      allowed: ['10.0.0.0/8'],
      over: { scheme: 'internet-facing' as const },
      refused:
        /forbids spec.inboundCIDRs: without spec.inboundCIDRs the managed security group lets in 0.0.0.0\/0 \(anywhere: the default for internet-facing\)/,
    },
    {
      reason: 'the internal default (the VPC’s CIDR, from EC2) within the allowed one',
      allowed: ['10.0.0.0/8'],
      over: { scheme: 'internal' as const },
      refused: undefined,
    },
    {
      reason: 'the internal default outside the allowed one',
      allowed: ['192.168.0.0/16'],
      over: { scheme: 'internal' as const },
      refused: /lets in 10.20.0.0\/16 \(the VPC’s CIDR\)/,
    },
    {
      reason: 'an IPv6 CIDR against IPv4 allowances only',
      allowed: ['0.0.0.0/0'],
      over: { ipAddressType: 'dualstack' as const, inboundCIDRs: ['2001:db8::/32'] },
      refused: /2001:db8::\/32 is not within/,
    },
    {
      reason: 'explicit groups (limited by securityGroups, not inboundCIDRs)',
      allowed: ['10.0.0.0/8'],
      over: { securityGroups: ['sg-11'] },
      refused: undefined,
    },
  ])('inboundCIDRs: $reason', async ({ allowed, over, refused }) => {
    const spec = ingress(over, 'securityGroups' in over ? [] : ['securityGroups']);
    const got = await lbRefusal({ inboundCIDRs: allowed }, spec);
    if (refused === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(refused);
  });
  it.each([
    {
      reason:
        'the certificate found for a host is not allowed: refused naming the host field, the host and the ARN',
      hosts: ['shop.example.com', 'api.example.com'],
      allowed: ['arn:aws:acm:us-east-1:111122223333:certificate/shop.example.com'],
      refusal:
        'TeamPolicy search forbids spec.listeners[0].certificateHosts[1]: certificate arn:aws:acm:us-east-1:111122223333:certificate/api.example.com, which ACM has for api.example.com, is not among the certificates this namespace may use (arn:aws:acm:us-east-1:111122223333:certificate/shop.example.com); use a host whose certificate is allowed (or name an allowed certificate in certificateArn), or ask the platform team to allow arn:aws:acm:us-east-1:111122223333:certificate/api.example.com in spec.guardrails.loadBalancers.certificates',
    },
    {
      reason: 'every certificate found is allowed (by prefix)',
      hosts: ['shop.example.com', 'api.example.com'],
      allowed: ['arn:aws:acm:us-east-1:111122223333:certificate/*'],
      refusal: undefined,
    },
    {
      reason:
        'a host no certificate covers is not the guard’s to refuse (the object reports it, nothing is served)',
      hosts: ['unknown.example.com'],
      allowed: ['arn:aws:acm:us-east-1:111122223333:certificate/mine'],
      refusal: undefined,
    },
  ])('checks certificateHosts: $reason', async ({ hosts, allowed, refusal }) => {
    calls.length = 0;
    const spec = ingress({
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateHosts: hosts,
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    });
    expect(await lbRefusal({ certificates: { arns: allowed } }, spec)).toBe(refusal);
    expect(calls.filter((c) => c.startsWith('host '))).toEqual(hosts.map((h) => `host ${h}`));
  });

  it('looks no host up when the policy does not limit certificates', async () => {
    calls.length = 0;
    const spec = ingress({
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateHosts: ['shop.example.com'],
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    });
    expect(await lbRefusal({ schemes: ['internal'] }, spec)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('refuses a certificate outside the listed ARNs and prefixes, naming the listener', async () => {
    const https = ingress({
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } },
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/other',
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    });
    expect(
      await lbRefusal(
        { certificates: { arns: ['arn:aws:acm:us-east-1:111122223333:certificate/mine'] } },
        https,
      ),
    ).toMatch(
      /^TeamPolicy search forbids spec.listeners\[1\].certificateArn: certificate arn:aws:acm:us-east-1:111122223333:certificate\/other/,
    );
    // An SNI certificate is checked as the default one, named by its listener and place.
    const sni = ingress({
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/mine',
          additionalCertificateArns: [
            'arn:aws:acm:us-east-1:111122223333:certificate/mine',
            'arn:aws:acm:us-east-1:111122223333:certificate/other',
          ],
          defaultAction: { fixedResponse: { statusCode: 200 } },
        },
      ],
    });
    expect(
      await lbRefusal(
        { certificates: { arns: ['arn:aws:acm:us-east-1:111122223333:certificate/mine'] } },
        sni,
      ),
    ).toMatch(
      /^TeamPolicy search forbids spec.listeners\[0\].additionalCertificateArns\[1\]: certificate arn:aws:acm:us-east-1:111122223333:certificate\/other is not among/,
    );
    // By tag: the certificate's ACM tags are read only when no ARN entry allows it.
    calls.length = 0;
    const byTag = { certificates: { tags: { team: 'search' } } };
    const withCert = (arn: string) =>
      ingress({
        listeners: [
          {
            port: 443,
            protocol: 'HTTPS',
            certificateArn: arn,
            defaultAction: { fixedResponse: { statusCode: 200 } },
          },
        ],
      });
    expect(
      await lbRefusal(byTag, withCert('arn:aws:acm:us-east-1:1:certificate/mine-tagged')),
    ).toBeUndefined();
    expect(await lbRefusal(byTag, withCert('arn:aws:acm:us-east-1:1:certificate/other'))).toBe(
      'TeamPolicy search forbids spec.listeners[0].certificateArn: certificate arn:aws:acm:us-east-1:1:certificate/other is not among the certificates this namespace may use (tagged team=search); use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates',
    );
    expect(calls).toEqual([
      'certificate arn:aws:acm:us-east-1:1:certificate/mine-tagged',
      'certificate arn:aws:acm:us-east-1:1:certificate/other',
    ]);
    expect(arnAllowed('arn:aws:acm:x:1:certificate/a', ['arn:aws:acm:x:1:certificate/*'])).toBe(true);
    expect(arnAllowed('arn:aws:acm:x:2:certificate/a', ['arn:aws:acm:x:1:certificate/*'])).toBe(false);
  });

  const acl = (name: string): string => `arn:aws:wafv2:us-east-1:111122223333:regional/webacl/${name}/0123`;
  const teamAcls = 'arn:aws:wafv2:us-east-1:111122223333:regional/webacl/team-*';
  it.each([
    {
      reason: 'an internet-facing load balancer without a web ACL, when one is required',
      g: { webAcls: { requiredOnInternetFacing: true } },
      spec: ingress({ scheme: 'internet-facing' }),
      refused:
        'TeamPolicy search forbids spec.waf.webAclArn: an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps; set spec.waf.webAclArn to an allowed web ACL (any REGIONAL WAFv2 web ACL) with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing',
    },
    {
      reason: 'an absent scheme is internet-facing (the CRD default)',
      g: { webAcls: { requiredOnInternetFacing: true, arns: [teamAcls] } },
      spec: ingress({}, ['scheme']),
      refused: `TeamPolicy search forbids spec.waf.webAclArn: an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps; set spec.waf.webAclArn to an allowed web ACL (${teamAcls}) with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing`,
    },
    {
      reason: 'an ACL left alone (Firewall Manager’s, say) is not one Skylift keeps: it does not count',
      g: { webAcls: { requiredOnInternetFacing: true } },
      spec: ingress({ scheme: 'internet-facing', waf: { policy: 'LeaveAlone' } }),
      refused: /^TeamPolicy search forbids spec.waf.webAclArn: an internet-facing load balancer/,
    },
    {
      reason: 'an internet-facing load balancer with a web ACL',
      g: { webAcls: { requiredOnInternetFacing: true } },
      spec: ingress({ scheme: 'internet-facing', waf: { webAclArn: acl('any') } }),
      refused: undefined,
    },
    {
      reason: 'an internal load balancer needs no web ACL',
      g: { webAcls: { requiredOnInternetFacing: true } },
      spec: ingress(),
      refused: undefined,
    },
    {
      reason: 'a web ACL the policy does not list',
      g: { webAcls: { arns: [teamAcls] } },
      spec: ingress({ waf: { webAclArn: acl('other') } }),
      refused: `TeamPolicy search forbids spec.waf.webAclArn: web ACL ${acl('other')} is not among the web ACLs this namespace may use (${teamAcls}); use an allowed web ACL, or ask the platform team to allow it in spec.guardrails.loadBalancers.webAcls.arns`,
    },
    {
      reason: 'a web ACL listed by prefix',
      g: { webAcls: { arns: [teamAcls] } },
      spec: ingress({ waf: { webAclArn: acl('team-a') } }),
      refused: undefined,
    },
  ] satisfies {
    reason: string;
    g: LoadBalancerGuardrails;
    spec: MyIngressSpec;
    refused: string | RegExp | undefined;
  }[])('web ACLs: $reason', async ({ g, spec, refused }) => {
    const got = await lbRefusal(g, spec);
    if (refused instanceof RegExp) expect(got).toMatch(refused);
    else expect(got).toBe(refused);
  });
});

const db = (over: Partial<ManagedDBSpec> = {}): ManagedDBSpec => ({
  engine: 'postgres',
  instanceClass: 'db.t4g.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  ...over,
});
function dbRefusal(g: DatabaseGuardrails, spec: ManagedDBSpec): string | undefined {
  try {
    checkManagedDb(policy({ databases: g }), spec);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ForbiddenError);
    return (err as Error).message;
  }
}

describe('ManagedDB guardrails', () => {
  it('refuses engines and classes outside the lists', () => {
    expect(dbRefusal({ engines: ['mysql'] }, db())).toBe(
      'TeamPolicy search forbids spec.engine: postgres is not among the engines this namespace may use (mysql); the engine is fixed at create: delete this ManagedDB and create it with an allowed engine, or ask the platform team to add it to spec.guardrails.databases.engines',
    );
    expect(dbRefusal({ instanceClasses: ['db.t4g.*'] }, db())).toBeUndefined();
    expect(dbRefusal({ instanceClasses: ['db.t4g.*'] }, db({ instanceClass: 'db.r6g.16xlarge' }))).toMatch(
      /^TeamPolicy search forbids spec.instanceClass: db.r6g.16xlarge is not among/,
    );
    expect(classAllowed('db.t4g.micro', ['db.t4g.micro'])).toBe(true);
    expect(classAllowed('db.t4g.microx', ['db.t4g.micro'])).toBe(false);
  });
  it('limits allocated and autoscaling storage', () => {
    expect(dbRefusal({ maxAllocatedStorageGiB: 100 }, db({ allocatedStorage: 100 }))).toBeUndefined();
    expect(dbRefusal({ maxAllocatedStorageGiB: 100 }, db({ allocatedStorage: 200 }))).toMatch(
      /forbids spec.allocatedStorage: 200 GiB is more than this namespace's databases may have \(100 GiB\)/,
    );
    expect(dbRefusal({ maxAllocatedStorageGiB: 100 }, db({ maxAllocatedStorage: 1000 }))).toMatch(
      /forbids spec.maxAllocatedStorage: 1000 GiB/,
    );
  });
  // Issue 27, item 11: another team's network, and what costs money.
  it.each([
    {
      reason: 'a security group not listed',
      g: { securityGroupIds: ['sg-0aa'] },
      spec: { vpcSecurityGroupIds: ['sg-0aa', 'sg-0bb'] },
      refused:
        'forbids spec.vpcSecurityGroupIds: sg-0bb is not among the security groups this namespace’s databases may be in (sg-0aa); set spec.vpcSecurityGroupIds to allowed groups, or ask the platform team to add them to spec.guardrails.databases.securityGroupIds',
    },
    {
      reason: 'no security group, where the policy lists them (RDS would use the VPC’s default)',
      g: { securityGroupIds: ['sg-0aa'] },
      spec: {},
      refused:
        'forbids spec.vpcSecurityGroupIds: a database must name its security groups in this namespace (allowed: sg-0aa)',
    },
    {
      reason: 'listed security groups',
      g: { securityGroupIds: ['sg-0aa'] },
      spec: { vpcSecurityGroupIds: ['sg-0aa'] },
    },
    {
      reason: 'another team’s DB subnet group',
      g: { subnetGroups: ['team-a-*'] },
      spec: { subnetGroupName: 'team-b-db' },
      refused:
        'forbids spec.subnetGroupName: team-b-db is not among the DB subnet groups this namespace’s databases may be in (team-a-*); the subnet group is fixed at create',
    },
    {
      reason: 'RDS’s default subnet group when not listed',
      g: { subnetGroups: ['team-a-*'] },
      spec: {},
      refused: 'forbids spec.subnetGroupName: default is not among',
    },
    {
      reason: 'an allowed subnet group by prefix',
      g: { subnetGroups: ['team-a-*'] },
      spec: { subnetGroupName: 'team-a-db' },
    },
    {
      reason: 'a storage type not listed (gp3 by default)',
      g: { storageTypes: ['gp2' as const] },
      spec: {},
      refused:
        'forbids spec.storageType: gp3 is not among the storage types this namespace’s databases may use (gp2)',
    },
    {
      reason: 'more IOPS than allowed',
      g: { maxIops: 3000 },
      spec: { storageType: 'io1' as const, iops: 10000 },
      refused:
        'forbids spec.iops: 10000 IOPS are more than this namespace’s databases may provision (3000); set spec.iops to at most 3000',
    },
    {
      reason: 'Multi-AZ where forbidden',
      g: { multiAZ: 'Forbidden' as const },
      spec: { multiAZ: true },
      refused:
        'forbids spec.multiAZ: Multi-AZ databases (a standby in another Availability Zone) are not allowed in this namespace; set spec.multiAZ: false',
    },
    { reason: 'Multi-AZ where the policy is silent', g: {}, spec: { multiAZ: true } },
    {
      reason: 'the default 7 days of backups over a limit of 3',
      g: { maxBackupRetentionDays: 3 },
      spec: {},
      refused:
        'forbids spec.backup.retentionDays: 7 days of automated backups are more than this namespace’s databases may keep (3); set spec.backup.retentionDays to at most 3',
    },
    {
      reason: 'scheduled snapshots where forbidden (0)',
      g: { maxScheduledSnapshots: 0 },
      spec: { backup: { snapshotSchedule: '0 3 * * *' } },
      refused:
        'forbids spec.backup.keepSnapshots: scheduled snapshots are not allowed in this namespace; remove spec.backup.snapshotSchedule',
    },
    {
      reason: 'more scheduled snapshots kept than allowed',
      g: { maxScheduledSnapshots: 5 },
      spec: { backup: { snapshotSchedule: '0 3 * * *', keepSnapshots: 30 } },
      refused:
        'forbids spec.backup.keepSnapshots: keeping 30 scheduled snapshots is more than this namespace’s databases may (5); set spec.backup.keepSnapshots to at most 5',
    },
    {
      reason: 'keepSnapshots without a schedule',
      g: { maxScheduledSnapshots: 0 },
      spec: { backup: { keepSnapshots: 30 } },
    },
  ])(
    '$reason',
    ({ g, spec, refused }: { g: DatabaseGuardrails; spec: Partial<ManagedDBSpec>; refused?: string }) => {
      const got = dbRefusal(g, db(spec));
      if (refused === undefined) expect(got).toBeUndefined();
      else expect(got).toContain(refused);
    },
  );

  it('refuses a public address unless allowed', () => {
    expect(dbRefusal({}, db({ publiclyAccessible: true }))).toMatch(/forbids spec.publiclyAccessible/);
    expect(dbRefusal({ publicAccess: 'Allowed' }, db({ publiclyAccessible: true }))).toBeUndefined();
    expect(dbRefusal({}, db({ publiclyAccessible: false }))).toBeUndefined();
  });
});
