// The security group Skylift manages for a MyIngress's load balancer (when spec.securityGroups is
// absent): which rules it should have, and the difference from the rules it has
// (docs/myingress.md#security-groups). Pure: no SDK is loaded by this file.
import { BlockList, isIPv6 } from 'node:net';
import type { IpPermission } from '@aws-sdk/client-ec2';
import type { LoadBalancer } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { OwnershipTags } from '../../apis/managed.ts';
import type { DeltaEntry } from '../../runtime/adapter.ts';
import { planChildSet, type ChildSetLimits, type ChildSetResult } from '../../runtime/childSet.ts';
import type { MyIngressField } from './delta.ts';
import { maxRulesPerGroup, type MyIngressSpec } from './api.ts';

/**
 * One security group rule as AWS counts them: a protocol and port range from or to one source
 * or destination. `peer`: an IPv4 or IPv6 CIDR, `sg:<id>` (another group) or `pl:<id>` (a prefix
 * list) — the last two only ever found, never wanted.
 */
export interface SgRule {
  /** `tcp`, or what AWS reports (`-1` for all traffic). */
  readonly protocol: string;
  readonly fromPort: number;
  readonly toPort: number;
  readonly peer: string;
}

/** The VPC a load balancer is in, with its CIDRs (what "inside the VPC" means for the rules). */
export interface VpcNetwork {
  readonly vpcId: string;
  /** The VPC's associated IPv4 CIDR blocks. */
  readonly cidrs: readonly string[];
  /** The VPC's associated IPv6 CIDR blocks (none when it has none). */
  readonly ipv6Cidrs: readonly string[];
}

/** The managed security group as a look found it: its ID, VPC, rules and ownership. */
export interface ManagedGroupSeen {
  readonly id: string;
  readonly name: string;
  readonly vpc: VpcNetwork;
  readonly ingress: readonly SgRule[];
  readonly egress: readonly SgRule[];
  readonly ownership: OwnershipTags | undefined;
}

/** What a look found of the managed group: `group` undefined when there is none. */
export interface ManagedGroupLook {
  readonly group: ManagedGroupSeen | undefined;
  /** The load balancer's VPC, when the look read it (where a missing group is created). */
  readonly vpc?: VpcNetwork | undefined;
}

/** The rules a managed group should have: inbound, and outbound (undefined: leave them as they are). */
export interface WantedRules {
  readonly ingress: readonly SgRule[];
  readonly egress: readonly SgRule[] | undefined;
}

/** A rule's identity, for set comparisons. Pure. */
export function ruleKey(r: SgRule): string {
  return `${r.protocol}:${r.fromPort}-${r.toPort}:${r.peer}`;
}

/** Whether Skylift manages the load balancer's security group (no spec.securityGroups). Pure. */
export function managedGroupWanted(spec: MyIngressSpec): boolean {
  return spec.securityGroups === undefined;
}

/**
 * The CIDRs the managed group lets in: spec.inboundCIDRs, else anywhere for internet-facing
 * (0.0.0.0/0, and ::/0 with dualstack) and the VPC's CIDRs for internal (its IPv6 ones too with
 * dualstack). Pure.
 */
export function inboundCIDRs(spec: MyIngressSpec, vpc: Pick<VpcNetwork, 'cidrs' | 'ipv6Cidrs'>): string[] {
  if (spec.inboundCIDRs !== undefined) return [...spec.inboundCIDRs];
  const dual = spec.ipAddressType === 'dualstack';
  if ((spec.scheme ?? 'internet-facing') === 'internet-facing')
    return dual ? ['0.0.0.0/0', '::/0'] : ['0.0.0.0/0'];
  return [...vpc.cidrs, ...(dual ? vpc.ipv6Cidrs : [])];
}

/** The inbound rules wanted: every listener port from every inbound CIDR (TCP). Pure. */
export function wantedIngress(spec: MyIngressSpec, vpc: Pick<VpcNetwork, 'cidrs' | 'ipv6Cidrs'>): SgRule[] {
  const cidrs = inboundCIDRs(spec, vpc);
  return (spec.listeners ?? []).flatMap((l) =>
    cidrs.map((peer) => ({ protocol: 'tcp', fromPort: l.port, toPort: l.port, peer })),
  );
}

/**
 * The outbound rules wanted: TCP to each target port (the port the targets are registered on,
 * health checks use the same) within the VPC's IPv4 CIDRs — where IP targets are. More than
 * {@link maxRulesPerGroup} such rules (many distinct target ports) become one port range per
 * CIDR, from the lowest target port to the highest, so the group always fits the quota. None
 * without target ports. Pure.
 */
export function wantedEgress(targetPorts: readonly number[], vpc: Pick<VpcNetwork, 'cidrs'>): SgRule[] {
  const ports = [...new Set(targetPorts)].sort((a, b) => a - b);
  if (ports.length === 0 || vpc.cidrs.length === 0) return [];
  if (ports.length * vpc.cidrs.length > maxRulesPerGroup) {
    const from = ports[0] ?? 1;
    const to = ports[ports.length - 1] ?? 65535;
    return vpc.cidrs.map((peer) => ({ protocol: 'tcp', fromPort: from, toPort: to, peer }));
  }
  return ports.flatMap((p) => vpc.cidrs.map((peer) => ({ protocol: 'tcp', fromPort: p, toPort: p, peer })));
}

/** The rules of AWS's permissions, one per peer (AWS's own count). Pure. */
export function rulesOf(permissions: readonly IpPermission[] | undefined): SgRule[] {
  const out: SgRule[] = [];
  for (const p of permissions ?? []) {
    const base = {
      protocol: p.IpProtocol ?? '-1',
      fromPort: p.FromPort ?? -1,
      toPort: p.ToPort ?? -1,
    };
    for (const r of p.IpRanges ?? []) if (r.CidrIp !== undefined) out.push({ ...base, peer: r.CidrIp });
    for (const r of p.Ipv6Ranges ?? []) if (r.CidrIpv6 !== undefined) out.push({ ...base, peer: r.CidrIpv6 });
    for (const g of p.UserIdGroupPairs ?? [])
      if (g.GroupId !== undefined) out.push({ ...base, peer: `sg:${g.GroupId}` });
    for (const l of p.PrefixListIds ?? [])
      if (l.PrefixListId !== undefined) out.push({ ...base, peer: `pl:${l.PrefixListId}` });
  }
  return out;
}

/** The permissions that carry `rules`, one per protocol and port range (few calls, few bytes). Pure. */
export function permissionsOf(rules: readonly SgRule[]): IpPermission[] {
  const byRange = new Map<string, IpPermission>();
  for (const r of rules) {
    const k = `${r.protocol}:${r.fromPort}-${r.toPort}`;
    const p: IpPermission = byRange.get(k) ?? {
      IpProtocol: r.protocol,
      ...(r.protocol !== '-1' ? { FromPort: r.fromPort, ToPort: r.toPort } : {}),
    };
    if (r.peer.startsWith('sg:'))
      p.UserIdGroupPairs = [...(p.UserIdGroupPairs ?? []), { GroupId: r.peer.slice(3) }];
    else if (r.peer.startsWith('pl:'))
      p.PrefixListIds = [...(p.PrefixListIds ?? []), { PrefixListId: r.peer.slice(3) }];
    else if (r.peer.includes(':')) p.Ipv6Ranges = [...(p.Ipv6Ranges ?? []), { CidrIpv6: r.peer }];
    else p.IpRanges = [...(p.IpRanges ?? []), { CidrIp: r.peer }];
    byRange.set(k, p);
  }
  return [...byRange.values()];
}

/** The rules to add and to remove to go from `have` to `want` (nothing else is touched). Pure. */
export interface RuleDiff {
  readonly authorize: SgRule[];
  readonly revoke: SgRule[];
}

/**
 * The child set of one direction's rules (every rule of the managed group is ours: the group is),
 * keyed by {@link ruleKey}; a rule is all key, so there are no updates. Within `limits`, or none
 * ({@link planChildSet}). Pure.
 */
function ruleSet(have: readonly SgRule[], want: readonly SgRule[], limits?: ChildSetLimits) {
  return planChildSet(
    want.map((r) => [ruleKey(r), r] as const),
    have.map((r) => [ruleKey(r), { value: r, ours: true }] as const),
    { equal: () => true, ...(limits !== undefined ? { limits } : {}) },
  );
}

/** What differs between `have` and `want`, by {@link ruleKey}: each rule once, in its list's order. Pure. */
export function ruleDiff(have: readonly SgRule[], want: readonly SgRule[]): RuleDiff {
  const r = ruleSet(have, want);
  // Without limits a plan always exists.
  if (!r.ok) throw new Error(r.error.message);
  return {
    authorize: r.plan.creates.map((c) => c.value),
    revoke: r.plan.deletes.map((c) => c.value),
  };
}

/**
 * The calls that bring one direction's rules from `have` to `want`, in order, never holding more
 * than {@link maxRulesPerGroup} rules at any moment: the missing rules authorized first (no moment
 * without a wanted rule), except that in a full group unwanted rules are revoked first to make
 * room. `{ ok: false }` when `want` itself holds more than the quota. Pure.
 */
export function rulePlan(have: readonly SgRule[], want: readonly SgRule[]): ChildSetResult<string, SgRule> {
  return ruleSet(have, want, { total: maxRulesPerGroup });
}

/** Whether a diff changes nothing. Pure. */
export function noChange(d: RuleDiff): boolean {
  return d.authorize.length === 0 && d.revoke.length === 0;
}

/**
 * Whether the CIDR `inner` lies within the CIDR `outer` (same family; `outer` no longer a prefix
 * than `inner`). Both must be valid CIDRs (admission checks them); an invalid one is within
 * nothing. Pure.
 */
export function cidrWithin(inner: string, outer: string): boolean {
  const i = parseCidr(inner);
  const o = parseCidr(outer);
  if (i === undefined || o === undefined || i.family !== o.family || o.prefix > i.prefix) return false;
  const list = new BlockList();
  list.addSubnet(o.address, o.prefix, o.family);
  return list.check(i.address, i.family);
}

function parseCidr(c: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = c.lastIndexOf('/');
  if (slash < 0) return undefined;
  const address = c.slice(0, slash);
  const prefix = Number(c.slice(slash + 1));
  const family = isIPv6(address) ? 'ipv6' : 'ipv4';
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 'ipv6' ? 128 : 32)) return undefined;
  try {
    // BlockList validates the address.
    new BlockList().addAddress(address, family);
  } catch {
    return undefined;
  }
  return { address, prefix, family };
}

/** The rules the managed group should have, for `spec` in `vpc`; egress undefined when the target ports are not known. Pure. */
export function wantedRules(
  spec: MyIngressSpec,
  vpc: VpcNetwork,
  egressPorts: readonly number[] | undefined,
): WantedRules {
  return {
    ingress: wantedIngress(spec, vpc),
    egress: egressPorts !== undefined ? wantedEgress(egressPorts, vpc) : undefined,
  };
}

/**
 * Whether the managed group is Skylift's to keep: no spec.securityGroups, and not an adopted load
 * balancer (spec.externalName), whose groups stay as they are unless spec.securityGroups names
 * some. Pure.
 */
export function managedGroupKept(spec: MyIngressSpec): boolean {
  return managedGroupWanted(spec) && (spec.externalName ?? '') === '';
}

/**
 * Whether a full look reads the managed group (DescribeSecurityGroups): when Skylift keeps one,
 * when status records one (it may have to be deleted), or when the load balancer has groups the
 * spec does not name (one may be the managed group a switch to spec.securityGroups left). Pure.
 */
export function managedGroupLookNeeded(
  spec: MyIngressSpec,
  lb: Pick<LoadBalancer, 'SecurityGroups'>,
  recorded: string | undefined,
): boolean {
  if (managedGroupKept(spec) || recorded !== undefined) return true;
  const named = spec.securityGroups;
  return named !== undefined && (lb.SecurityGroups ?? []).some((g) => !named.includes(g));
}

/**
 * What differs in the load balancer's security groups: the groups attached, and the managed
 * group's rules (against {@link wantedRules}); a managed group that is ours while spec names groups
 * is one to delete. `look` undefined: the managed group was not read (nothing said about it). Pure.
 */
export function securityGroupDelta(
  spec: MyIngressSpec,
  lb: Pick<LoadBalancer, 'SecurityGroups'>,
  look: ManagedGroupLook | undefined,
  egressPorts: readonly number[] | undefined,
  ours: OwnershipTags,
): DeltaEntry<MyIngressField>[] {
  const attached = lb.SecurityGroups ?? [];
  const same = (want: readonly string[]): boolean =>
    attached.length === want.length && want.every((g) => attached.includes(g));
  if (!managedGroupKept(spec)) {
    const out: DeltaEntry<MyIngressField>[] = [];
    if (spec.securityGroups !== undefined && !same(spec.securityGroups))
      out.push({ field: 'securityGroups', change: 'security groups' });
    const g = look?.group;
    if (g !== undefined && g.ownership?.uid === ours.uid)
      out.push({ field: 'managedSecurityGroup', change: `managed security group ${g.id} no longer wanted` });
    return out;
  }
  if (look === undefined) return [];
  const g = look.group;
  if (g === undefined) return [{ field: 'managedSecurityGroup', change: 'managed security group missing' }];
  const out: DeltaEntry<MyIngressField>[] = [];
  if (!same([g.id]))
    out.push({
      field: 'securityGroups',
      change: `security groups ${attached.join(', ') || 'none'} → ${g.id}`,
    });
  const want = wantedRules(spec, g.vpc, egressPorts);
  const i = ruleDiff(g.ingress, want.ingress);
  if (!noChange(i))
    out.push({
      field: 'managedSecurityGroup',
      change: `inbound rules of ${g.id}: ${i.authorize.length} to add, ${i.revoke.length} to revoke`,
    });
  if (want.egress !== undefined) {
    const e = ruleDiff(g.egress, want.egress);
    if (!noChange(e))
      out.push({
        field: 'managedSecurityGroup',
        change: `outbound rules of ${g.id}: ${e.authorize.length} to add, ${e.revoke.length} to revoke`,
      });
  }
  return out;
}
