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
      /forbids spec.securityGroups: a load balancer without spec.securityGroups gets the VPC’s default security group/,
    );
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
  it('refuses a public address unless allowed', () => {
    expect(dbRefusal({}, db({ publiclyAccessible: true }))).toMatch(/forbids spec.publiclyAccessible/);
    expect(dbRefusal({ publicAccess: 'Allowed' }, db({ publiclyAccessible: true }))).toBeUndefined();
    expect(dbRefusal({}, db({ publiclyAccessible: false }))).toBeUndefined();
  });
});
