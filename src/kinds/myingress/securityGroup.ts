// The security group Skylift manages for a MyIngress's load balancer: finding it by its
// deterministic name (and checking its ownership tags), creating it tagged in one call, bringing its
// rules to the plan by difference, attaching it, and deleting it once the load balancer is gone
// (docs/myingress.md#security-groups). A group Skylift did not create is never changed.
import type { EC2Client, SecurityGroup } from '@aws-sdk/client-ec2';
import {
  SetSecurityGroupsCommand,
  type ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownerAsSeenBy, ownershipFromTags, ownershipTagMap, type OwnershipTags } from '../../apis/managed.ts';
import { awsCall, lookup } from '../../providers/aws/calls.ts';
import { toTypedAwsError } from '../../providers/aws/errors.ts';
import { tagList, tagMap } from '../../providers/aws/tags.ts';
import {
  classifySecurityGroupDelete,
  ec2ErrorTable,
  isDuplicatePermission,
  isPermissionNotFound,
  isSecurityGroupNotFound,
} from '../../providers/ec2/errors.ts';
import type { ChildBatch } from '../../runtime/childSet.ts';
import { OwnershipConflictError, RequeueAfter, TerminalError } from '../../runtime/errors.ts';
import type { MyIngress } from './api.ts';
import type { IngressUpdate } from './deps.ts';
import { elbv2Call } from './elbv2.ts';
import { securityGroupName } from './names.ts';
import { subnetsOf } from './delta.ts';
import {
  managedGroupKept,
  wantedRules,
  type ManagedGroupLook,
  permissionsOf,
  rulePlan,
  rulesOf,
  type ManagedGroupSeen,
  type SgRule,
  type VpcNetwork,
  type WantedRules,
} from './securityGroupPlan.ts';

export type { ManagedGroupLook, ManagedGroupSeen, WantedRules } from './securityGroupPlan.ts';

/** Condition reason while a deleted load balancer's network interfaces still hold the managed group. */
export const waitingForNetworkInterfacesReason = 'WaitingForNetworkInterfaces';

/**
 * How long to wait before deleting again a group AWS says is still in use (the network interfaces
 * go within minutes): twice the first poll interval (10 s by default).
 */
export function securityGroupInUseRetryMs(pollMs: number): number {
  return 2 * pollMs;
}

/** The default outbound rule AWS gives a new group: all traffic to anywhere (revoked at once). */
const defaultEgress: SgRule = { protocol: '-1', fromPort: -1, toPort: -1, peer: '0.0.0.0/0' };

/**
 * The managed security groups of MyIngresses' load balancers. Every EC2 call goes through the
 * EC2 client (loaded on first use) and becomes a typed error named after its step; each step is
 * idempotent and sends only what differs.
 */
export class SecurityGroups {
  private readonly ec2: () => Promise<EC2Client>;
  private readonly elbv2: ElasticLoadBalancingV2Client;
  private readonly inUseRetryMs: number;

  constructor(deps: {
    readonly ec2: () => Promise<EC2Client>;
    readonly elbv2: ElasticLoadBalancingV2Client;
    readonly pollMs: number;
  }) {
    this.ec2 = deps.ec2;
    this.elbv2 = deps.elbv2;
    this.inUseRetryMs = securityGroupInUseRetryMs(deps.pollMs);
  }

  /** The VPC of `subnets` (DescribeSubnets), with its CIDRs (DescribeVpcs). Read-only. */
  async networkOfSubnets(subnets: readonly string[]): Promise<VpcNetwork> {
    const out = await this.call('find the VPC of the subnets', async (ec2) => {
      const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
      return ec2.send(new DescribeSubnetsCommand({ SubnetIds: [...subnets] }));
    });
    const vpcId = out.Subnets?.[0]?.VpcId;
    if (vpcId === undefined)
      throw new Error(`find the VPC of the subnets: no subnet among ${subnets.join(', ')}`);
    return this.network(vpcId);
  }

  /** The CIDRs of VPC `vpcId` (DescribeVpcs). Read-only. */
  async network(vpcId: string): Promise<VpcNetwork> {
    const out = await this.call('describe the VPC', async (ec2) => {
      const { DescribeVpcsCommand } = await import('@aws-sdk/client-ec2');
      return ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId] }));
    });
    const vpc = out.Vpcs?.[0];
    const cidrs = (vpc?.CidrBlockAssociationSet ?? [])
      .filter((a) => a.CidrBlockState?.State === undefined || a.CidrBlockState.State === 'associated')
      .flatMap((a) => (a.CidrBlock !== undefined ? [a.CidrBlock] : []));
    const ipv6Cidrs = (vpc?.Ipv6CidrBlockAssociationSet ?? [])
      .filter((a) => a.Ipv6CidrBlockState?.State === undefined || a.Ipv6CidrBlockState.State === 'associated')
      .flatMap((a) => (a.Ipv6CidrBlock !== undefined ? [a.Ipv6CidrBlock] : []));
    return {
      vpcId,
      cidrs: cidrs.length > 0 ? cidrs : vpc?.CidrBlock !== undefined ? [vpc.CidrBlock] : [],
      ipv6Cidrs,
    };
  }

  /**
   * The group named after `mr` (in `vpc`'s VPC when given: names are unique per VPC), with its
   * rules; undefined when there is none. Its ownership is reported, not judged. Read-only.
   */
  async find(mr: MyIngress, vpc?: VpcNetwork): Promise<ManagedGroupSeen | undefined> {
    const name = nameOf(mr);
    const out = await this.call('find the managed security group', async (ec2) => {
      const { DescribeSecurityGroupsCommand } = await import('@aws-sdk/client-ec2');
      return ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [
            { Name: 'group-name', Values: [name] },
            ...(vpc !== undefined ? [{ Name: 'vpc-id', Values: [vpc.vpcId] }] : []),
          ],
        }),
      );
    });
    const g = out.SecurityGroups?.find((x) => x.GroupName === name);
    if (g?.GroupId === undefined) return undefined;
    return seen(g, vpc ?? (await this.network(g.VpcId ?? '')));
  }

  /**
   * The managed group of `mr` in `vpc`, created (tagged in the same call, so a crash cannot leave
   * an untagged one) when there is none, with its rules brought to `want`. OwnershipConflictError
   * when a group of that name belongs to someone else: it is left alone.
   */
  async ensure(
    mr: MyIngress,
    ours: OwnershipTags,
    vpc: VpcNetwork,
    want: WantedRules,
  ): Promise<ManagedGroupSeen> {
    const found = await this.find(mr, vpc);
    if (found !== undefined) {
      assertOurs(found, ours);
      return this.syncRules(found, want);
    }
    const name = nameOf(mr);
    const id = await this.create(mr, name, ours, vpc);
    // AWS gives a new group one outbound rule, all traffic anywhere: the sync revokes it.
    const created: ManagedGroupSeen = {
      id,
      name,
      vpc,
      ingress: [],
      egress: [defaultEgress],
      ownership: ours,
    };
    return this.syncRules(created, { ingress: want.ingress, egress: want.egress ?? [] });
  }

  /**
   * Brings the group's rules to `want` by difference (securityGroupPlan.ts, rulePlan): inbound
   * then outbound, the missing rules authorized before the unwanted ones are revoked (no moment
   * without a wanted rule), except that a full group has rules revoked first to make room (never
   * more than AWS's quota at any moment). Throws TerminalError, sending nothing, when `want` holds
   * more rules than the quota. Returns the group as left.
   */
  async syncRules(g: ManagedGroupSeen, want: WantedRules): Promise<ManagedGroupSeen> {
    const ingress = rulesPlanned(g, 'inbound', g.ingress, want.ingress);
    const egress = want.egress !== undefined ? rulesPlanned(g, 'outbound', g.egress, want.egress) : [];
    if (ingress.length === 0 && egress.length === 0) return g;
    const {
      AuthorizeSecurityGroupIngressCommand,
      RevokeSecurityGroupIngressCommand,
      AuthorizeSecurityGroupEgressCommand,
      RevokeSecurityGroupEgressCommand,
    } = await import('@aws-sdk/client-ec2');
    const GroupId = g.id;
    const send = async (direction: 'inbound' | 'outbound', b: ChildBatch<string, SgRule>): Promise<void> => {
      const IpPermissions = permissionsOf(b.children.map((c) => c.value));
      if (b.op === 'create' && direction === 'inbound')
        await this.tolerating('open the managed security group', isDuplicatePermission, (ec2) =>
          ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId, IpPermissions })),
        );
      else if (b.op === 'create')
        await this.tolerating(
          'let the managed security group reach the targets',
          isDuplicatePermission,
          (ec2) => ec2.send(new AuthorizeSecurityGroupEgressCommand({ GroupId, IpPermissions })),
        );
      else if (direction === 'inbound')
        await this.tolerating('close the managed security group', isPermissionNotFound, (ec2) =>
          ec2.send(new RevokeSecurityGroupIngressCommand({ GroupId, IpPermissions })),
        );
      else
        await this.tolerating(
          'revoke outbound rules of the managed security group',
          isPermissionNotFound,
          (ec2) => ec2.send(new RevokeSecurityGroupEgressCommand({ GroupId, IpPermissions })),
        );
    };
    // Both directions' authorizations (and the revocations that make room for them) before
    // either direction's remaining revocations.
    const [inFirst, inLast] = splitAfterLastCreate(ingress);
    const [outFirst, outLast] = splitAfterLastCreate(egress);
    for (const b of inFirst) await send('inbound', b);
    for (const b of outFirst) await send('outbound', b);
    for (const b of inLast) await send('inbound', b);
    for (const b of outLast) await send('outbound', b);
    return {
      ...g,
      ingress: [...want.ingress],
      egress: want.egress !== undefined ? [...want.egress] : g.egress,
    };
  }

  /**
   * The update step for the load balancer's security groups. Skylift keeping one
   * (managedGroupKept): the managed group created if missing, its rules brought to the spec, and
   * it alone attached. Otherwise the groups spec.securityGroups names are attached (nothing when it
   * names none: an adopted load balancer keeps its groups). `look`: what observe read of the
   * managed group (undefined: not read, then it is looked up now).
   */
  async sync(
    u: IngressUpdate,
    look: ManagedGroupLook | undefined,
    egressPorts: readonly number[] | undefined,
  ): Promise<void> {
    const spec = u.mr.spec;
    if (!managedGroupKept(spec)) {
      if (spec.securityGroups !== undefined) await this.attach(u, spec.securityGroups);
      return;
    }
    const vpc =
      look?.vpc ??
      look?.group?.vpc ??
      (u.lb.VpcId !== undefined
        ? await this.network(u.lb.VpcId)
        : await this.networkOfSubnets(subnetsOf(u.lb)));
    const want = wantedRules(spec, vpc, egressPorts);
    const before = look?.group;
    const group =
      before !== undefined
        ? await this.syncRules(before, want)
        : await this.ensure(u.mr, u.ctx.ownership, vpc, want);
    if (before === undefined) u.done.push(`security group ${group.id}`);
    else if (group !== before) u.done.push(`rules of security group ${group.id}`);
    u.applied.securityGroup({ group, vpc });
    await this.attach(u, [group.id]);
  }

  /**
   * The last update step: deletes the managed group `look` found when Skylift no longer keeps one
   * (spec.securityGroups given), now that it is detached. AWS may hold it a little longer: a
   * RequeueAfter then (see deleteGroup).
   */
  async dropUnwanted(u: IngressUpdate, look: ManagedGroupLook | undefined): Promise<void> {
    const g = look?.group;
    if (g === undefined || managedGroupKept(u.mr.spec) || g.ownership?.uid !== u.ctx.ownership.uid) return;
    await this.deleteGroup(g.id);
    u.applied.securityGroup({ group: undefined, vpc: g.vpc });
    u.done.push(`managed security group ${g.id} deleted`);
  }

  /** Sets the load balancer's security groups to `groups` when they differ (SetSecurityGroups). */
  async attach(u: IngressUpdate, groups: readonly string[]): Promise<void> {
    const have = u.lb.SecurityGroups ?? [];
    if (have.length === groups.length && groups.every((g) => have.includes(g))) return;
    await elbv2Call('set security groups', () =>
      this.elbv2.send(new SetSecurityGroupsCommand({ LoadBalancerArn: u.arn, SecurityGroups: [...groups] })),
    );
    u.done.push('security groups');
  }

  /**
   * Deletes `mr`'s managed group, if there is one and it is `mr`'s (a group of that name that is
   * someone else's is left alone). While AWS still holds it — the deleted load balancer's network
   * interfaces, which go within minutes — a RequeueAfter, never a failure.
   */
  async delete(mr: MyIngress): Promise<void> {
    const g = await this.find(mr);
    if (g === undefined || g.ownership?.uid !== mr.metadata.uid) return;
    await this.deleteGroup(g.id);
  }

  /** Deletes group `id` (ours): gone counts as deleted; in use is a RequeueAfter (see delete). */
  async deleteGroup(id: string): Promise<void> {
    const { DeleteSecurityGroupCommand } = await import('@aws-sdk/client-ec2');
    const ec2 = await this.ec2();
    try {
      await ec2.send(new DeleteSecurityGroupCommand({ GroupId: id }));
    } catch (err) {
      switch (classifySecurityGroupDelete(err)) {
        case 'gone':
          return;
        case 'inUse':
          throw new RequeueAfter(
            this.inUseRetryMs,
            `delete the managed security group ${id}: AWS still holds it (the load balancer's network interfaces are released within minutes of its deletion); trying again in ${this.inUseRetryMs / 1000} s`,
            waitingForNetworkInterfacesReason,
          );
        case 'error':
          throw toTypedAwsError('delete the managed security group', err, ec2ErrorTable);
      }
    }
  }

  private async create(mr: MyIngress, name: string, ours: OwnershipTags, vpc: VpcNetwork): Promise<string> {
    const out = await this.call(`create security group ${name}`, async (ec2) => {
      const { CreateSecurityGroupCommand } = await import('@aws-sdk/client-ec2');
      return ec2.send(
        new CreateSecurityGroupCommand({
          GroupName: name,
          Description: `Skylift: load balancer of MyIngress ${mr.metadata.namespace ?? ''}/${mr.metadata.name}`,
          VpcId: vpc.vpcId,
          TagSpecifications: [
            {
              ResourceType: 'security-group',
              Tags: [...tagList(ownershipTagMap(ours)), { Key: 'Name', Value: name }],
            },
          ],
        }),
      );
    });
    if (out.GroupId === undefined) throw new Error(`create security group ${name}: AWS gave no group ID`);
    return out.GroupId;
  }

  private async call<T>(what: string, fn: (ec2: EC2Client) => Promise<T>): Promise<T> {
    return awsCall(what, ec2ErrorTable, async () => fn(await this.ec2()));
  }

  /** A call whose failure `isFine` says is the wanted state already (a rule there, or not there). */
  private async tolerating(
    what: string,
    isFine: (err: unknown) => boolean,
    fn: (ec2: EC2Client) => Promise<unknown>,
  ): Promise<void> {
    await lookup(what, ec2ErrorTable, isFine, async () => fn(await this.ec2()));
  }
}

/**
 * The batches that bring one direction's rules of `g` from `have` to `want` (rulePlan); throws
 * TerminalError when `want` holds more than AWS's quota of rules. Pure.
 */
function rulesPlanned(
  g: ManagedGroupSeen,
  direction: 'inbound' | 'outbound',
  have: readonly SgRule[],
  want: readonly SgRule[],
): readonly ChildBatch<string, SgRule>[] {
  const r = rulePlan(have, want);
  if (r.ok) return r.plan.batches;
  throw new TerminalError(
    `${direction} rules of the managed security group ${g.name} (${g.id}): ${r.error.message} (AWS’s default quota of ${direction} rules per security group, one per port range and CIDR): use fewer listeners or inbound CIDRs`,
  );
}

/** `batches` cut after the last create: what adds (and makes room), then what only removes. Pure. */
function splitAfterLastCreate<T extends { readonly op: string }>(batches: readonly T[]): [T[], T[]] {
  const last = batches.map((b) => b.op).lastIndexOf('create');
  return [batches.slice(0, last + 1), batches.slice(last + 1)];
}

/** The deterministic name of `mr`'s managed group. Pure. */
function nameOf(mr: MyIngress): string {
  return securityGroupName(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
}

/** A described group as a look reports it. Pure. */
function seen(g: SecurityGroup, vpc: VpcNetwork): ManagedGroupSeen {
  return {
    id: g.GroupId ?? '',
    name: g.GroupName ?? '',
    vpc,
    ingress: rulesOf(g.IpPermissions),
    egress: rulesOf(g.IpPermissionsEgress),
    ownership: ownershipFromTags(tagMap(g.Tags)),
  };
}

/**
 * Throws OwnershipConflictError when the group under the managed group's name is not `ours`
 * (another object's, or untagged: not Skylift's). Pure.
 */
export function assertOurs(g: ManagedGroupSeen, ours: OwnershipTags): void {
  if (g.ownership?.uid === ours.uid) return;
  throw new OwnershipConflictError(
    `security group ${g.name} (${g.id}) has the name of this object's managed security group but ${g.ownership !== undefined ? `is owned by ${ownerAsSeenBy(g.ownership, ours)}` : 'carries no Skylift ownership tags'}; Skylift leaves it alone: delete or rename it, or set spec.securityGroups`,
  );
}

/** Whether a not-found error is what a lookup of a deleted group gets. Re-exported for teardown. */
export { isSecurityGroupNotFound };
