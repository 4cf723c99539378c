// The managed security group's plan (src/kinds/myingress/securityGroupPlan.ts), the DeleteSecurityGroup
// classification (src/providers/ec2/errors.ts) and who the ALB data plane admits
// (dev/albDataPlane/securityGroups.ts): pure functions, table-driven.
import { describe, expect, it } from 'vitest';
import { admissionFor, admits } from '../../dev/albDataPlane/securityGroups.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  cidrWithin,
  inboundCIDRs,
  managedGroupLookNeeded,
  permissionsOf,
  ruleDiff,
  rulesOf,
  securityGroupDelta,
  wantedEgress,
  wantedIngress,
  type SgRule,
} from '../../src/kinds/myingress/securityGroupPlan.ts';
import { classifySecurityGroupDelete } from '../../src/providers/ec2/errors.ts';

const vpc = { vpcId: 'vpc-1', cidrs: ['10.0.0.0/16'], ipv6Cidrs: ['2600:1f18::/56'] };
const listener = (port: number) => ({
  port,
  protocol: 'HTTP' as const,
  defaultAction: { fixedResponse: { statusCode: 200 } },
});
const spec = (over: Partial<MyIngressSpec> = {}): MyIngressSpec => ({
  subnets: ['subnet-1', 'subnet-2'],
  listeners: [listener(80), listener(443)],
  ...over,
});
const tcp = (port: number, peer: string): SgRule => ({ protocol: 'tcp', fromPort: port, toPort: port, peer });
const ours = { cluster: 'c', owner: 'shop/web', uid: 'u1' };

describe('inboundCIDRs', () => {
  it.each([
    { reason: 'internet-facing ipv4: anywhere', over: {}, want: ['0.0.0.0/0'] },
    {
      reason: 'internet-facing dualstack: anywhere in both families',
      over: { ipAddressType: 'dualstack' as const },
      want: ['0.0.0.0/0', '::/0'],
    },
    { reason: 'internal: the VPC’s CIDRs', over: { scheme: 'internal' as const }, want: ['10.0.0.0/16'] },
    {
      reason: 'internal dualstack: with its IPv6 CIDRs',
      over: { scheme: 'internal' as const, ipAddressType: 'dualstack' as const },
      want: ['10.0.0.0/16', '2600:1f18::/56'],
    },
    { reason: 'given: as given', over: { inboundCIDRs: ['192.0.2.0/24'] }, want: ['192.0.2.0/24'] },
  ])('$reason', ({ over, want }) => {
    expect(inboundCIDRs(spec(over), vpc)).toEqual(want);
  });
});

describe('rules wanted', () => {
  it('opens every listener port from every CIDR', () => {
    expect(wantedIngress(spec({ inboundCIDRs: ['192.0.2.0/24', '198.51.100.0/24'] }), vpc)).toEqual([
      tcp(80, '192.0.2.0/24'),
      tcp(80, '198.51.100.0/24'),
      tcp(443, '192.0.2.0/24'),
      tcp(443, '198.51.100.0/24'),
    ]);
  });
  it('leads out only to the target ports within the VPC, once per port', () => {
    expect(wantedEgress([8080, 9090, 8080], vpc)).toEqual([
      tcp(8080, '10.0.0.0/16'),
      tcp(9090, '10.0.0.0/16'),
    ]);
    expect(wantedEgress([], vpc)).toEqual([]);
  });
  it('collapses more target ports than a group holds into one range per CIDR', () => {
    const ports = Array.from({ length: 61 }, (_, i) => 9000 + i * 2);
    expect(wantedEgress(ports, vpc)).toEqual([
      { protocol: 'tcp', fromPort: 9000, toPort: 9120, peer: '10.0.0.0/16' },
    ]);
  });
});

describe('ruleDiff and permissions', () => {
  it('adds and revokes only what differs (AWS’s default all-traffic egress among what goes)', () => {
    const have = [tcp(80, '0.0.0.0/0'), { protocol: '-1', fromPort: -1, toPort: -1, peer: '0.0.0.0/0' }];
    const d = ruleDiff(have, [tcp(80, '0.0.0.0/0'), tcp(8080, '10.0.0.0/16')]);
    expect(d.authorize).toEqual([tcp(8080, '10.0.0.0/16')]);
    expect(d.revoke).toEqual([{ protocol: '-1', fromPort: -1, toPort: -1, peer: '0.0.0.0/0' }]);
  });
  it('round-trips through AWS’s permissions, one permission per port range, each family in its list', () => {
    const rules = [
      tcp(80, '0.0.0.0/0'),
      tcp(80, '::/0'),
      tcp(443, '0.0.0.0/0'),
      { protocol: 'tcp', fromPort: 22, toPort: 22, peer: 'sg:sg-9' },
    ];
    const perms = permissionsOf(rules);
    expect(perms).toHaveLength(3);
    expect(perms[0]).toEqual({
      IpProtocol: 'tcp',
      FromPort: 80,
      ToPort: 80,
      IpRanges: [{ CidrIp: '0.0.0.0/0' }],
      Ipv6Ranges: [{ CidrIpv6: '::/0' }],
    });
    expect(rulesOf(perms).sort((a, b) => a.fromPort - b.fromPort)).toEqual(
      [...rules].sort((a, b) => a.fromPort - b.fromPort),
    );
    expect(permissionsOf([{ protocol: '-1', fromPort: -1, toPort: -1, peer: '0.0.0.0/0' }])).toEqual([
      { IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] },
    ]);
  });
});

describe('cidrWithin', () => {
  it.each([
    ['10.1.0.0/16', '10.0.0.0/8', true],
    ['10.0.0.0/8', '10.0.0.0/8', true],
    ['10.0.0.0/8', '10.1.0.0/16', false],
    ['0.0.0.0/0', '10.0.0.0/8', false],
    ['192.0.2.0/24', '0.0.0.0/0', true],
    ['2001:db8::/32', '::/0', true],
    ['2001:db8::/32', '0.0.0.0/0', false],
    ['not-a-cidr', '0.0.0.0/0', false],
  ])('%s within %s: %s', (inner, outer, want) => {
    expect(cidrWithin(inner, outer)).toBe(want);
  });
});

describe('securityGroupDelta and when to look', () => {
  const g = {
    id: 'sg-m',
    name: 'sky-x',
    vpc,
    ingress: [tcp(80, '0.0.0.0/0'), tcp(443, '0.0.0.0/0')],
    egress: [tcp(8080, '10.0.0.0/16')],
    ownership: ours,
  };
  it.each([
    { reason: 'all as wanted', lb: ['sg-m'], look: { group: g }, ports: [8080], want: [] },
    {
      reason: 'the group missing',
      lb: [],
      look: { group: undefined },
      ports: [8080],
      want: ['managedSecurityGroup'],
    },
    {
      reason: 'another group attached',
      lb: ['sg-other'],
      look: { group: g },
      ports: [8080],
      want: ['securityGroups'],
    },
    {
      reason: 'a listener’s rule missing',
      lb: ['sg-m'],
      look: { group: { ...g, ingress: [tcp(80, '0.0.0.0/0')] } },
      ports: [8080],
      want: ['managedSecurityGroup'],
    },
    {
      reason: 'target ports moved',
      lb: ['sg-m'],
      look: { group: g },
      ports: [9090],
      want: ['managedSecurityGroup'],
    },
    {
      reason: 'target ports unknown: outbound left alone',
      lb: ['sg-m'],
      look: { group: g },
      ports: undefined,
      want: [],
    },
    { reason: 'not looked at', lb: ['sg-m'], look: undefined, ports: [8080], want: [] },
  ])('$reason', ({ lb, look, ports, want }) => {
    expect(securityGroupDelta(spec(), { SecurityGroups: lb }, look, ports, ours).map((e) => e.field)).toEqual(
      want,
    );
  });
  it('names the managed group for deletion once spec.securityGroups is given, and never another owner’s', () => {
    const explicit = spec({ securityGroups: ['sg-team'] });
    expect(
      securityGroupDelta(explicit, { SecurityGroups: ['sg-team'] }, { group: g }, [8080], ours)[0]?.change,
    ).toBe('managed security group sg-m no longer wanted');
    const foreign = { ...g, ownership: { ...ours, uid: 'someone' } };
    expect(
      securityGroupDelta(explicit, { SecurityGroups: ['sg-team'] }, { group: foreign }, [8080], ours),
    ).toEqual([]);
  });
  it('looks for the group when kept, when recorded, or when the load balancer has groups the spec does not name', () => {
    expect(managedGroupLookNeeded(spec(), {}, undefined)).toBe(true);
    const explicit = spec({ securityGroups: ['sg-team'] });
    expect(managedGroupLookNeeded(explicit, { SecurityGroups: ['sg-team'] }, undefined)).toBe(false);
    expect(managedGroupLookNeeded(explicit, { SecurityGroups: ['sg-team'] }, 'sg-m')).toBe(true);
    expect(managedGroupLookNeeded(explicit, { SecurityGroups: ['sg-team', 'sg-m'] }, undefined)).toBe(true);
    // An adopted load balancer (externalName) keeps its groups: no managed group is looked for.
    expect(
      managedGroupLookNeeded(spec({ externalName: 'arn:aws:…' }), { SecurityGroups: ['sg-x'] }, undefined),
    ).toBe(false);
  });
});

describe('classifySecurityGroupDelete', () => {
  const err = (name: string) => Object.assign(new Error(name), { name });
  it.each([
    ['DependencyViolation', 'inUse'],
    ['InvalidGroup.InUse', 'inUse'],
    ['InvalidGroup.NotFound', 'gone'],
    ['InvalidSecurityGroupID.NotFound', 'gone'],
    ['UnauthorizedOperation', 'error'],
  ])('%s: %s', (code, want) => {
    expect(classifySecurityGroupDelete(err(code))).toBe(want);
  });
});

describe('the ALB data plane’s security group admission', () => {
  const groups = [
    {
      GroupId: 'sg-a',
      IpPermissions: [
        { IpProtocol: 'tcp', FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: '127.0.0.1/32' }] },
        { IpProtocol: 'tcp', FromPort: 8000, ToPort: 8100, IpRanges: [{ CidrIp: '127.0.0.0/8' }] },
        { IpProtocol: 'udp', FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: '0.0.0.0/0' }] },
        { IpProtocol: 'tcp', FromPort: 80, ToPort: 80, UserIdGroupPairs: [{ GroupId: 'sg-b' }] },
      ],
    },
    { GroupId: 'sg-all', IpPermissions: [{ IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] }] },
  ];
  it.each([
    { reason: 'no groups: everyone', ids: [], port: 80, from: '127.0.0.9', want: true },
    { reason: 'inside the port’s CIDR', ids: ['sg-a'], port: 80, from: '127.0.0.1', want: true },
    { reason: 'IPv4-mapped address', ids: ['sg-a'], port: 80, from: '::ffff:127.0.0.1', want: true },
    {
      reason: 'outside the port’s CIDR (UDP and group rules count for nothing)',
      ids: ['sg-a'],
      port: 80,
      from: '127.0.0.2',
      want: false,
    },
    { reason: 'a port range', ids: ['sg-a'], port: 8080, from: '127.0.0.2', want: true },
    { reason: 'a port no rule opens', ids: ['sg-a'], port: 443, from: '127.0.0.1', want: false },
    {
      reason: 'all traffic from anywhere',
      ids: ['sg-a', 'sg-all'],
      port: 443,
      from: '127.0.0.2',
      want: true,
    },
    {
      reason: 'a group not found admits nothing',
      ids: ['sg-gone'],
      port: 80,
      from: '127.0.0.1',
      want: false,
    },
  ])('$reason', ({ ids, port, from, want }) => {
    expect(admits(admissionFor(ids, groups, port), from)).toBe(want);
  });
});
