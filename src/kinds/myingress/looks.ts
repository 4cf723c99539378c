// What observe knows of a live load balancer's children — listeners, rules,
// target groups and their targets, attributes, tags: recalled from what this
// adapter last saw or applied (memory.ts), re-read in part before anything is
// changed, or described in full (docs/myingress.md#what-a-resync-checks).
import type { LoadBalancer } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags } from '../../apis/managed.ts';
import type { DeltaEntry, ReconcileContext } from '../../runtime/adapter.ts';
import type { MyIngress } from './api.ts';
import {
  ingressDelta,
  sameSet,
  type MyIngressField,
  type ObservedLoadBalancer,
  type ObservedTargetGroup,
} from './delta.ts';
import type { MyIngressAdapterDeps } from './deps.ts';
import { desiredTargetGroups } from './desired.ts';
import { tagsOf } from './elbv2.ts';
import type { Listeners } from './listeners.ts';
import type { LoadBalancers } from './loadBalancer.ts';
import { childrenOf, specKey, type Children, type IngressMemory, type Remembered } from './memory.ts';
import type { KnownChildren } from './observation.ts';
import type { TargetGroups } from './targetGroups.ts';
import type { WebAcls } from './webAcl.ts';
import { webAclNeeded } from './webAclPlan.ts';
import { assertOurs, type SecurityGroups } from './securityGroup.ts';
import { managedGroupKept, managedGroupLookNeeded, type ManagedGroupLook } from './securityGroupPlan.ts';
import { subnetsOf } from './delta.ts';

/** A look at a live load balancer's children: what was seen, what differs from the spec, how it was known. */
export interface Look {
  readonly observed: ObservedLoadBalancer;
  readonly delta: DeltaEntry<MyIngressField>[];
  readonly known: KnownChildren;
}

/** The parts whose reads a full look is made of. */
interface LookParts {
  readonly loadBalancers: LoadBalancers;
  readonly listeners: Listeners;
  readonly targetGroups: TargetGroups;
  readonly webAcls: WebAcls;
  readonly securityGroups: SecurityGroups;
}

/**
 * Looks at a live load balancer's children, as cheaply as what it must verify
 * allows (docs/myingress.md#what-a-resync-checks). Read-only in AWS (it
 * records what it learnt in the memory); throws typed errors when AWS cannot
 * be asked.
 */
export class Looks {
  private readonly d: Pick<MyIngressAdapterDeps, 'tagDescriber'>;
  private readonly parts: LookParts;
  private readonly memory: IngressMemory;

  constructor(deps: Pick<MyIngressAdapterDeps, 'tagDescriber'>, parts: LookParts, memory: IngressMemory) {
    this.d = deps;
    this.parts = parts;
    this.memory = memory;
  }

  /**
   * The children of `mr`'s load balancer `lb` (ARN `arn`, just described):
   * recalled, with no call, when the memory holds them for this load balancer
   * and spec, established less than the full-check period ago, and with the
   * fresh load balancer and the caches' wanted targets they match the spec;
   * when what differs is only targets — or the load balancer was just created
   * by this process and has no children yet — recalled and refreshed before
   * anything is changed: the tags (ownership) and the registered targets of
   * the target groups whose targets differ; otherwise described in full. `mr` is the spec as
   * applied (certificateHosts resolved); `held`: the ports of listeners held back, not compared.
   */
  async look(
    mr: MyIngress,
    ctx: ReconcileContext,
    lb: LoadBalancer,
    arn: string,
    held: ReadonlySet<number> = new Set(),
  ): Promise<Look> {
    const uid = ctx.ownership.uid;
    const key = specKey(mr.spec);
    const now = ctx.clock.now();
    const r = this.memory.recall(uid, arn, key, now);
    if (r !== undefined) {
      const known: KnownChildren = { origin: r.origin, since: r.knownSince };
      const recalled = this.recalled(mr, ctx, lb, r.children);
      const delta = ingressDelta(mr, ctx.ownership, recalled, undefined, held);
      if (delta.length === 0) {
        ctx.logger.debug({ look: 'recalled', origin: r.origin }, 'load balancer children recalled');
        return { observed: recalled, delta, known };
      }
      const refreshed = await this.refreshed(arn, r, recalled, delta);
      if (refreshed !== undefined) {
        this.memory.remember(uid, { ...r, children: childrenOf(refreshed) }, now);
        ctx.logger.debug({ look: 'refreshed', origin: r.origin }, 'load balancer children refreshed');
        return {
          observed: refreshed,
          delta: ingressDelta(mr, ctx.ownership, refreshed, r.children.targetGroups, held),
          known,
        };
      }
    }
    // What Skylift last left registered, looked up before this look replaces it: targets that
    // differ while AWS still holds those followed the endpoints, even at a full look.
    const left = this.memory.lastLeft(uid, arn);
    const observed = await this.full(mr, ctx, lb, arn);
    this.memory.remember(
      uid,
      { arn, specKey: key, knownSince: now, origin: 'described', children: childrenOf(observed) },
      now,
    );
    ctx.logger.debug({ look: 'full' }, 'load balancer children described');
    return {
      observed,
      delta: ingressDelta(mr, ctx.ownership, observed, left, held),
      known: { origin: 'described', since: now },
    };
  }

  /** The remembered children with the fresh load balancer and the wanted targets from the caches. No call. */
  private recalled(
    mr: MyIngress,
    ctx: ReconcileContext,
    lb: LoadBalancer,
    c: Children,
  ): ObservedLoadBalancer {
    return {
      ownership: c.ownership,
      lb,
      listeners: c.listeners,
      rules: c.rules,
      targetGroups: desiredTargetGroups(mr.spec, ctx.ownership.uid).map((want) => {
        const known = c.targetGroups.get(want.key);
        return {
          want,
          tg: known?.tg,
          registered: known?.registered ?? [],
          wanted: this.parts.targetGroups.wantedTargets(mr, want),
          tags: known?.tags,
          attributes: known?.attributes,
        };
      }),
      attributes: c.attributes,
      tags: c.tags,
      webAcl: c.webAcl,
      securityGroup: c.securityGroup,
      egressPorts: this.parts.targetGroups.targetPorts(mr),
    };
  }

  /**
   * The recalled children refreshed where an update is about to act on them:
   * the tags, and the registered targets of each target group whose targets
   * differ. Undefined when a full look is needed instead: something other
   * than targets differs from remembered children that were not just created,
   * or the load balancer or a target group is gone.
   */
  private async refreshed(
    arn: string,
    r: Remembered,
    recalled: ObservedLoadBalancer,
    delta: readonly DeltaEntry<MyIngressField>[],
  ): Promise<ObservedLoadBalancer | undefined> {
    if (r.origin !== 'created' && !delta.every((e) => e.field === 'targets')) return undefined;
    const tags = (await tagsOf(this.d.tagDescriber, [arn])).get(arn);
    if (tags === undefined) return undefined;
    const targetGroups: ObservedTargetGroup[] = [];
    for (const t of recalled.targetGroups) {
      const tgArn = t.tg?.TargetGroupArn;
      if (tgArn === undefined || t.wanted === undefined || sameSet(t.registered, t.wanted)) {
        targetGroups.push(t);
        continue;
      }
      const registered = await this.parts.targetGroups.registeredIfExists(tgArn);
      if (registered === undefined) return undefined;
      targetGroups.push({ ...t, registered });
    }
    return { ...recalled, tags, ownership: ownershipFromTags(tags), targetGroups };
  }

  /**
   * Every child described: listeners and their rules, attributes, target groups with their targets
   * and attributes, tags, the web ACL when spec.waf names one or Skylift recorded one (webAclNeeded),
   * and the target groups of ours the spec does not want, found by ownership tag (one GetResources).
   */
  private async full(
    mr: MyIngress,
    ctx: ReconcileContext,
    lb: LoadBalancer,
    arn: string,
  ): Promise<ObservedLoadBalancer> {
    const { listeners, rules } = await this.parts.listeners.observe(arn);
    const attributes = await this.parts.loadBalancers.attributes(arn);
    const groups = await this.parts.targetGroups.observe(mr, ctx, arn);
    // The load balancer's tags and its target groups' in one DescribeTags.
    const tgArns = groups.flatMap((t) => (t.tg?.TargetGroupArn !== undefined ? [t.tg.TargetGroupArn] : []));
    const tagged = await tagsOf(this.d.tagDescriber, [arn, ...tgArns]);
    const tags = tagged.get(arn) ?? {};
    const targetGroups = groups.map((t) => ({ ...t, tags: tagged.get(t.tg?.TargetGroupArn ?? '') }));
    const webAcl = webAclNeeded(mr.spec, tags) ? await this.parts.webAcls.attached(arn) : undefined;
    const securityGroup = await this.managedGroup(mr, ctx, lb);
    // Target groups of ours no lookup above finds: made but never recorded, their backend dropped
    // since. Not under ObserveOnly, which would never delete them.
    const strays =
      mr.spec.managementPolicy === 'ObserveOnly'
        ? undefined
        : await this.parts.targetGroups.strays(ctx, new Set(tgArns));
    return {
      ownership: ownershipFromTags(tags),
      lb,
      listeners,
      rules,
      targetGroups,
      attributes,
      tags,
      ...(webAcl !== undefined ? { webAcl } : {}),
      ...(securityGroup !== undefined ? { securityGroup } : {}),
      egressPorts: this.parts.targetGroups.targetPorts(mr),
      ...(strays !== undefined ? { strayTargetGroups: strays } : {}),
    };
  }

  /**
   * The managed security group, when a look needs it (managedGroupLookNeeded): the VPC
   * (DescribeVpcs) and the group by its name (DescribeSecurityGroups). A group under that name
   * that is not this object's is an OwnershipConflictError while Skylift should keep one, and
   * ignored otherwise.
   */
  private async managedGroup(
    mr: MyIngress,
    ctx: ReconcileContext,
    lb: LoadBalancer,
  ): Promise<ManagedGroupLook | undefined> {
    const recorded = mr.status?.managedSecurityGroup;
    if (!managedGroupLookNeeded(mr.spec, lb, typeof recorded === 'string' ? recorded : undefined))
      return undefined;
    const sgs = this.parts.securityGroups;
    const vpc =
      lb.VpcId !== undefined ? await sgs.network(lb.VpcId) : await sgs.networkOfSubnets(subnetsOf(lb));
    const group = await sgs.find(mr, vpc);
    if (group !== undefined && managedGroupKept(mr.spec)) assertOurs(group, ctx.ownership);
    return { group: group?.ownership?.uid === ctx.ownership.uid ? group : undefined, vpc };
  }
}
