// The load balancer itself: finding it, creating it in the spec's subnets,
// reading its attributes, and the update steps that change it in place
// (tags, IP address type, security groups, subnets, attributes).
import {
  AddTagsCommand,
  CreateLoadBalancerCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  ModifyLoadBalancerAttributesCommand,
  SetIpAddressTypeCommand,
  SetSubnetsCommand,
  type LoadBalancer,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags, type OwnershipTags } from '../../apis/managed.ts';
import { createOrFind, lookup } from '../../providers/aws/calls.ts';
import { hasErrorCode } from '../../providers/aws/errors.ts';
import { ownedTagList } from '../../providers/aws/tags.ts';
import { elbv2ErrorTable, isElbv2NotFound } from '../../providers/elbv2/errors.ts';
import { hasDelta, type Delta, type ReconcileContext } from '../../runtime/adapter.ts';
import { TerminalError } from '../../runtime/errors.ts';
import type { MyIngress } from './api.ts';
import { defaultAttribute, sameSet, wantedAttributes, type MyIngressField } from './delta.ts';
import type { IngressUpdate, MyIngressAdapterDeps } from './deps.ts';
import { elbv2Call, withTags } from './elbv2.ts';
import { syncUserTags } from './userTags.ts';
import { loadBalancerName } from './names.ts';

type LoadBalancerDeps = Pick<
  MyIngressAdapterDeps,
  'elbv2' | 'elbv2Create' | 'ec2' | 'describer' | 'tagDescriber'
>;

/**
 * A MyIngress's Application Load Balancer. Reads throw typed errors when AWS
 * cannot be asked; each update step is idempotent, changes one setting only
 * when it differs from the spec, and appends what it changed to the update.
 */
export class LoadBalancers {
  private readonly d: LoadBalancerDeps;

  constructor(deps: LoadBalancerDeps) {
    this.d = deps;
  }

  /**
   * The load balancer of `mr`: by `spec.externalName`, else by the ARN
   * recorded in status when that is its own (its deterministic name, or its
   * ownership tags name this object), else by its deterministic name;
   * undefined when there is none. status.arn is a hint, never proof: anyone
   * with status rights can write it, and following it to another load
   * balancer would leave this object's own unmanaged. Read-only.
   */
  async find(mr: MyIngress): Promise<LoadBalancer | undefined> {
    const ext = mr.spec.externalName;
    if (ext !== undefined && ext !== '') return this.d.describer.describe(ext);
    const name = loadBalancerName(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
    const recorded = typeof mr.status?.arn === 'string' ? mr.status.arn : undefined;
    if (recorded !== undefined) {
      const lb = await this.d.describer.describe(recorded);
      if (lb !== undefined && (lb.LoadBalancerName === name || (await this.ownedBy(recorded, mr)))) return lb;
    }
    const out = await lookup('find load balancer', elbv2ErrorTable, isElbv2NotFound, () =>
      this.d.elbv2.send(new DescribeLoadBalancersCommand({ Names: [name] })),
    );
    return out?.LoadBalancers?.[0];
  }

  /** Whether the load balancer `arn`'s ownership tags name `mr` (its uid). Read-only. */
  private async ownedBy(arn: string, mr: MyIngress): Promise<boolean> {
    const found = await withTags(this.d.tagDescriber, arn, arn);
    return found !== undefined && ownershipFromTags(found.tags)?.uid === mr.metadata.uid;
  }

  /**
   * Creates the load balancer named `name` (without SDK retries), tagged with
   * `tags`; when the name is taken by this object's own load balancer (an
   * earlier answer was lost), returns that one. `answered`: the load balancer
   * is CreateLoadBalancer's own answer (not one found under the name, which
   * may have children already). `placed`: its subnets ({@link subnets}) and security groups
   * (undefined: AWS's default). Safe to repeat.
   */
  async create(
    mr: MyIngress,
    ctx: ReconcileContext,
    name: string,
    tags: { Key: string; Value: string }[],
    placed: { readonly subnets: string[]; readonly securityGroups: readonly string[] | undefined },
  ): Promise<{ lb: LoadBalancer | undefined; answered: boolean }> {
    const { subnets, securityGroups } = placed;
    return createOrFind<{ lb: LoadBalancer | undefined; answered: boolean }>({
      what: `create load balancer ${name}`,
      table: elbv2ErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DuplicateLoadBalancerName'),
      ownership: ctx.ownership,
      find: async () => {
        const found = (await this.d.elbv2.send(new DescribeLoadBalancersCommand({ Names: [name] })))
          .LoadBalancers?.[0];
        const taken = await withTags(this.d.tagDescriber, found, found?.LoadBalancerArn);
        return taken === undefined
          ? undefined
          : { value: { lb: taken.value, answered: false }, tags: taken.tags };
      },
      create: async () => ({
        lb: (
          await this.d.elbv2Create.send(
            new CreateLoadBalancerCommand({
              Name: name,
              Type: 'application',
              Scheme: mr.spec.scheme ?? 'internet-facing',
              IpAddressType: mr.spec.ipAddressType ?? 'ipv4',
              Subnets: subnets,
              ...(securityGroups !== undefined ? { SecurityGroups: [...securityGroups] } : {}),
              Tags: tags,
            }),
          )
        ).LoadBalancers?.[0],
        answered: true,
      }),
    });
  }

  /** The load balancer's attributes by key, as AWS lists them. Read-only. */
  async attributes(arn: string): Promise<Map<string, string>> {
    const out = await elbv2Call('describe attributes', () =>
      this.d.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn })),
    );
    return new Map((out.Attributes ?? []).map((a) => [a.Key ?? '', a.Value ?? '']));
  }

  /** Adds the ownership tags (with the user's) when the load balancer is not this object's yet. */
  async tagOwnership(u: IngressUpdate, ownership: OwnershipTags | undefined): Promise<void> {
    if (ownership?.uid === u.ctx.ownership.uid) return;
    const tags = ownedTagList(u.mr.spec.tags, u.ctx.ownership);
    await elbv2Call('tag load balancer', () =>
      this.d.elbv2.send(new AddTagsCommand({ ResourceArns: [u.arn], Tags: tags })),
    );
    u.applied.addedTags(tags);
    u.done.push('tagged');
  }

  /**
   * Brings the user's tags to the spec's when the load balancer is already
   * this object's: removes the keys Skylift applied that the spec dropped,
   * adds and changes the rest with the record of their keys, then drops
   * record tags no longer needed (providers/aws/tags.ts). Tags others put on
   * the load balancer are left alone.
   */
  async syncUserTags(
    u: IngressUpdate,
    ownership: OwnershipTags | undefined,
    delta: Delta<MyIngressField>,
    have: Readonly<Record<string, string>>,
  ): Promise<void> {
    if (ownership?.uid !== u.ctx.ownership.uid || !hasDelta(delta, 'tags')) return;
    const synced = await syncUserTags(this.d.elbv2, 'load balancer', u.arn, u.mr.spec.tags, have);
    if (synced.removed.length > 0) u.applied.removedTags(synced.removed);
    if (synced.added.length > 0) u.applied.addedTags(synced.added);
    if (synced.removed.length + synced.added.length > 0) u.done.push('tags');
  }

  /** Sets the IP address type the spec asks for (default ipv4). */
  async syncIpAddressType(u: IngressUpdate): Promise<void> {
    const ipType = u.mr.spec.ipAddressType ?? 'ipv4';
    if (ipType === (u.lb.IpAddressType ?? 'ipv4')) return;
    await elbv2Call('set ip address type', () =>
      this.d.elbv2.send(new SetIpAddressTypeCommand({ LoadBalancerArn: u.arn, IpAddressType: ipType })),
    );
    u.done.push(`ip address type ${ipType}`);
  }

  /**
   * Sets the spec's subnets, or those its selector matched when observe
   * resolved it (`selected`); nothing when neither is known.
   */
  async syncSubnets(u: IngressUpdate, selected: readonly string[] | undefined): Promise<void> {
    const subnets = u.mr.spec.subnets ?? (selected !== undefined ? [...selected] : undefined);
    if (
      subnets === undefined ||
      sameSet(
        (u.lb.AvailabilityZones ?? []).map((z) => z.SubnetId ?? ''),
        subnets,
      )
    )
      return;
    await elbv2Call('set subnets', () =>
      this.d.elbv2.send(new SetSubnetsCommand({ LoadBalancerArn: u.arn, Subnets: subnets })),
    );
    u.done.push('subnets');
  }

  /** Modifies, in one call, the attributes whose observed value differs from the spec's. */
  async syncAttributes(u: IngressUpdate, observed: ReadonlyMap<string, string>): Promise<void> {
    const attrs = [...wantedAttributes(u.mr)].filter(
      ([k, v]) => (observed.get(k) ?? defaultAttribute(k)) !== v,
    );
    if (attrs.length === 0) return;
    await elbv2Call('modify attributes', () =>
      this.d.elbv2.send(
        new ModifyLoadBalancerAttributesCommand({
          LoadBalancerArn: u.arn,
          Attributes: attrs.map(([Key, Value]) => ({ Key, Value })),
        }),
      ),
    );
    u.applied.setAttributes(attrs);
    u.done.push(`attributes ${attrs.map(([k]) => k).join(', ')}`);
  }

  /** The spec's subnets, or those its selector's tags match (at least two, else TerminalError). Read-only. */
  async subnets(mr: MyIngress): Promise<string[]> {
    if (mr.spec.subnets !== undefined) return mr.spec.subnets;
    const ids = await this.selected(mr);
    if (ids.length < 2) throw new TerminalError(selectorTooNarrow(ids.length));
    return ids;
  }

  /** The subnets `spec.subnetSelector`'s tags match now, however many (DescribeSubnets). Read-only. */
  async selected(mr: MyIngress): Promise<string[]> {
    const tags = mr.spec.subnetSelector?.tags ?? {};
    const out = await elbv2Call('find subnets by tag', async () => {
      // Only a selector needs EC2: its SDK is loaded here, at the first such create (issue 16).
      const ec2 = await this.d.ec2();
      const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
      return ec2.send(
        new DescribeSubnetsCommand({
          Filters: Object.entries(tags).map(([k, v]) => ({ Name: `tag:${k}`, Values: [v] })),
        }),
      );
    });
    return (out.Subnets ?? []).map((s) => s.SubnetId ?? '').filter((s) => s !== '');
  }
}

/** What is wrong when spec.subnetSelector matches `n` (< 2) subnets, and what to do. Pure. */
export function selectorTooNarrow(n: number): string {
  return `spec.subnetSelector matches ${n} subnet(s); an Application Load Balancer needs at least two, in different Availability Zones: tag two or more such subnets so that spec.subnetSelector matches them, or list them in spec.subnets`;
}
