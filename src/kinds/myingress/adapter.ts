import type { LoadBalancer } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { MyIngress } from './api.ts';
import { ownershipFromTags, type KindStatusOf } from '../../apis/managed.ts';
import type {
  Created,
  ExistingObservation,
  ExternalClient,
  Observation,
  ReleaseCause,
  Released,
} from '../../runtime/adapter.ts';
import {
  busyObservation,
  type ReadyState,
  type ReconcileContext,
  type Updated,
} from '../../runtime/adapter.ts';
import { ConditionType, getCondition, Reason } from '../../runtime/conditions.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import { TerminalError } from '../../runtime/errors.ts';
import { ownedTagList, tagMap } from '../../providers/aws/tags.ts';
import { AppliedChildren } from './applied.ts';
import { sameSet, subnetsOf, type MyIngressField } from './delta.ts';
import { backendSettingsRefusal, sniQuotaRefusal } from './desired.ts';
import type { IngressContext, IngressUpdate, MyIngressAdapterDeps } from './deps.ts';
import { tagsOf } from './elbv2.ts';
import { Listeners } from './listeners.ts';
import { LoadBalancers, selectorTooNarrow } from './loadBalancer.ts';
import { Looks } from './looks.ts';
import { childrenOf, IngressMemory, newLoadBalancerChildren, specKey } from './memory.ts';
import { loadBalancerName } from './names.ts';
import {
  IngressReason,
  ingressReadiness,
  ingressReady,
  ingressStatus,
  type KnownChildren,
  type MyIngressDetails,
} from './observation.ts';
import { carriedBackendsReady, missingBackends, missingBackendsReady } from './backends.ts';
import {
  appliedSpec,
  certificatesReady,
  heldListeners,
  resolveCertificateHosts,
  usesCertificateHosts,
  type CertificateResolution,
} from './certificateHosts.ts';
import { Teardown } from './teardown.ts';
import { ReadinessGates } from './readinessGates.ts';
import { TargetGroups } from './targetGroups.ts';
import { WebAcls } from './webAcl.ts';
import { SecurityGroups } from './securityGroup.ts';
import { managedGroupKept, wantedRules, type ManagedGroupLook } from './securityGroupPlan.ts';

export type { MyIngressField } from './delta.ts';
export type { MyIngressDetails } from './observation.ts';

type IngressObservation = ExistingObservation<MyIngressDetails, MyIngressField>;

/**
 * MyIngress's AWS side: an Application Load Balancer with its listeners,
 * rules, one IP target group per backend Service port, and the Services'
 * ready endpoints as targets. Found by recorded ARN, externalName or its
 * deterministic name; children by listing the load balancer and by
 * deterministic target group names — or, between full looks, recalled from
 * what this adapter last saw or applied (looks.ts); updates are minimal (one
 * changed rule is one ModifyRule). Deletion removes rules, listeners, the
 * load balancer and then the target groups AWS would leave behind. Remembers
 * per object, in memory, for the AWS clients it was built with only.
 */
export class MyIngressAdapter implements ExternalClient<MyIngress, MyIngressDetails, MyIngressField> {
  private readonly d: MyIngressAdapterDeps;
  private readonly loadBalancers: LoadBalancers;
  private readonly listeners: Listeners;
  private readonly targetGroups: TargetGroups;
  private readonly webAcls: WebAcls;
  private readonly gates: ReadinessGates;
  private readonly securityGroups: SecurityGroups;
  private readonly teardown: Teardown;
  private readonly memory: IngressMemory;
  private readonly looks: Looks;

  constructor(deps: MyIngressAdapterDeps) {
    this.d = deps;
    this.loadBalancers = new LoadBalancers(deps);
    this.listeners = new Listeners(deps);
    this.targetGroups = new TargetGroups(deps);
    this.webAcls = new WebAcls(deps);
    this.gates = new ReadinessGates(deps, this.targetGroups);
    this.securityGroups = new SecurityGroups(deps);
    this.teardown = new Teardown(deps, this.targetGroups, this.securityGroups);
    this.memory = new IngressMemory(deps.fullCheckMs);
    this.looks = new Looks(
      deps,
      {
        loadBalancers: this.loadBalancers,
        listeners: this.listeners,
        targetGroups: this.targetGroups,
        webAcls: this.webAcls,
        securityGroups: this.securityGroups,
      },
      this.memory,
    );
  }

  async observe(
    mr: MyIngress,
    ctx: ReconcileContext,
  ): Promise<Observation<MyIngressDetails, MyIngressField>> {
    const lb = await this.loadBalancers.find(mr);
    if (lb?.LoadBalancerArn === undefined) {
      this.memory.forget(ctx.ownership.uid);
      return this.observeLeftovers(mr, ctx);
    }
    if (mr.metadata.deletionTimestamp !== undefined) {
      this.memory.forget(ctx.ownership.uid);
      this.d.targetHealth.forget(mr.metadata.namespace ?? '', mr.metadata.name);
      return this.observeDeleting(lb, lb.LoadBalancerArn);
    }
    return this.observeLive(mr, ctx, lb, lb.LoadBalancerArn);
  }

  /**
   * Lets go of the load balancer (deletionPolicy Orphan, ObserveOnly): nothing in AWS is touched
   * and nothing is under way (every change is made within a pass). A deleted object's remembered
   * children are forgotten; an object switched to ObserveOnly keeps them for its looks.
   */
  release(mr: MyIngress, ctx: ReconcileContext, cause: ReleaseCause): Promise<Released> {
    if (cause === 'deleted') {
      this.memory.forget(ctx.ownership.uid);
      this.d.targetHealth.forget(mr.metadata.namespace ?? '', mr.metadata.name);
    }
    return Promise.resolve({});
  }

  /** How many objects' load balancer children this adapter remembers (see memory.ts). */
  get remembered(): number {
    return this.memory.size;
  }

  async create(mr: MyIngress, ctx: ReconcileContext): Promise<Created> {
    // Admission checks forward.service pairs; weighted backends sharing a target group are checked here.
    const conflict = backendSettingsRefusal(mr.spec);
    if (conflict !== undefined) throw new TerminalError(conflict);
    const name = loadBalancerName(mr.metadata.namespace ?? '', mr.metadata.name, ctx.ownership.uid);
    const tags = ownedTagList(mr.spec.tags, ctx.ownership);
    const subnets = await this.loadBalancers.subnets(mr);
    // The managed security group first, with its rules: the load balancer is created in it, never
    // in the VPC's default group. Found again by name if an earlier create got this far.
    let securityGroup: ManagedGroupLook | undefined;
    if (managedGroupKept(mr.spec)) {
      const vpc = await this.securityGroups.networkOfSubnets(subnets);
      const group = await this.securityGroups.ensure(
        mr,
        ctx.ownership,
        vpc,
        wantedRules(mr.spec, vpc, this.targetGroups.targetPorts(mr)),
      );
      securityGroup = { group, vpc };
    }
    const { lb, answered } = await this.loadBalancers.create(mr, ctx, name, tags, {
      subnets,
      securityGroups: securityGroup?.group !== undefined ? [securityGroup.group.id] : mr.spec.securityGroups,
    });
    // Just created by this process: it has no children yet, which the next look need not ask AWS.
    // (AWS answers a repeated identical CreateLoadBalancer with the existing load balancer; were
    // that one to have children, the update's creates would fail on them — a taken port or
    // priority — and the failed update makes the next look a full one.)
    if (answered && lb?.LoadBalancerArn !== undefined) {
      const now = ctx.clock.now();
      // Remembered for the spec as the next look applies it (a lookup in the shared list).
      const applied = appliedSpec(mr.spec, await this.certificatesOf(mr));
      this.memory.remember(
        ctx.ownership.uid,
        {
          arn: lb.LoadBalancerArn,
          specKey: specKey(applied),
          knownSince: now,
          origin: 'created',
          children: newLoadBalancerChildren(tagMap(tags), ctx.ownership, securityGroup),
        },
        now,
      );
    }
    return {
      status: {
        arn: lb?.LoadBalancerArn,
        dnsName: lb?.DNSName,
        canonicalHostedZoneId: lb?.CanonicalHostedZoneId,
        state: lb?.State?.Code,
        ...(securityGroup?.group !== undefined ? { managedSecurityGroup: securityGroup.group.id } : {}),
      },
      description: `created load balancer ${name}`,
    };
  }

  async update(given: MyIngress, observed: IngressObservation, ctx: IngressContext): Promise<Updated> {
    const d = observed.details;
    if (d.found !== 'loadBalancer') return { description: 'nothing to change' };
    // The spec as observe resolved it: certificateHosts replaced by the certificates found, and the
    // listeners whose hosts have none held back (certificateHosts.ts).
    const mr: MyIngress = { ...given, spec: appliedSpec(given.spec, d.certificates) };
    const held = heldListeners(given.spec, d.certificates);
    // Admission counts the spec; an object admitted before that rule is counted here, before any call.
    const overQuota = sniQuotaRefusal(mr.spec);
    if (overQuota !== undefined) throw new TerminalError(overQuota);
    const conflict = backendSettingsRefusal(mr.spec);
    if (conflict !== undefined) throw new TerminalError(conflict);
    const uid = ctx.ownership.uid;
    // Until every step has succeeded, what AWS has is not known for sure: the next look is a full one.
    this.memory.forget(uid);
    const applied = new AppliedChildren(childrenOf({ ...d, ownership: observed.ownership }));
    const u: IngressUpdate = { mr, ctx, lb: d.lb, arn: d.lb.LoadBalancerArn ?? '', done: [], applied };
    await this.loadBalancers.tagOwnership(u, observed.ownership);
    await this.loadBalancers.syncUserTags(u, observed.ownership, observed.delta, d.tags);
    await this.loadBalancers.syncIpAddressType(u);
    await this.securityGroups.sync(u, d.securityGroup, d.egressPorts);
    await this.loadBalancers.syncSubnets(u, d.selectedSubnets);
    await this.loadBalancers.syncAttributes(u, d.attributes);
    // The web ACL after the tags: its record is a tag the user-tag step leaves alone.
    await this.webAcls.sync(u, d.webAcl, u.applied.children().tags);
    // Adopting a load balancer another object made (externalName, or its owner gone): the target
    // groups that object made for it are adopted with it, and deleted below once unused.
    const previous = observed.ownership;
    const inherited =
      previous !== undefined && previous.uid !== uid && previous.cluster === ctx.ownership.cluster
        ? await this.targetGroups.inherited(u.arn, previous)
        : [];
    // Target groups first: listeners and rules point at them.
    const tgArns = await this.targetGroups.sync(u, d.targetGroups);
    const listeners = await this.listeners.sync(u, d.listeners, tgArns, held);
    await this.listeners.syncRules(u, d.rules, listeners.listenerArns, tgArns);
    await this.listeners.deleteUnwanted(u, listeners.unwanted);
    // Target groups no longer referenced go last: recorded in status, inherited, or found by tag.
    await this.targetGroups.deleteUnused(u, new Set(tgArns.values()), [
      ...inherited,
      ...(d.strayTargetGroups ?? []),
    ]);
    // A managed group spec.securityGroups replaced, once detached (AWS may hold it a while yet).
    await this.securityGroups.dropUnwanted(u, d.securityGroup);
    if (d.known !== undefined) {
      // Known as before, as the update left it; the next full look stays due when it was.
      this.memory.remember(
        uid,
        {
          arn: u.arn,
          specKey: specKey(mr.spec),
          knownSince: d.known.since,
          origin: 'applied',
          children: applied.children(),
        },
        ctx.clock.now(),
      );
    }
    return { description: u.done.length > 0 ? u.done.join('; ') : 'nothing to change' };
  }

  async delete(
    mr: MyIngress,
    observed: IngressObservation,
    ctx: ReconcileContext,
  ): Promise<{ gone: boolean }> {
    return this.teardown.delete(mr, observed.details, ctx);
  }

  /**
   * No load balancer: a deletion cut short after the load balancer went (a
   * kill, a throttled DeleteTargetGroup) still owns target groups, which AWS
   * keeps: report them, so delete() runs again.
   */
  private async observeLeftovers(
    mr: MyIngress,
    ctx: ReconcileContext,
  ): Promise<Observation<MyIngressDetails, MyIngressField>> {
    if (mr.metadata.deletionTimestamp === undefined) return { exists: false };
    const leftovers = await this.targetGroups.owned(mr, ctx);
    const group = await this.securityGroups.find(mr);
    const sg = group?.ownership?.uid === ctx.ownership.uid ? group.id : undefined;
    if (leftovers.length === 0 && sg === undefined) return { exists: false };
    return busyObservation({
      ownership: ctx.ownership,
      reason: Reason.Deleting,
      message: `deleting ${[
        ...(leftovers.length > 0 ? [`${leftovers.length} target group(s)`] : []),
        ...(sg !== undefined ? [`security group ${sg}`] : []),
      ].join(' and ')} left after the load balancer`,
      status: {},
      details: {
        found: 'leftovers',
        leftoverTargetGroups: leftovers,
        ...(sg !== undefined ? { leftoverSecurityGroup: sg } : {}),
      },
    });
  }

  /** A load balancer whose object is being deleted: its ownership (for the engine's check) and identity. */
  private async observeDeleting(lb: LoadBalancer, arn: string): Promise<IngressObservation> {
    const tags = (await tagsOf(this.d.tagDescriber, [arn])).get(arn) ?? {};
    return {
      exists: true,
      ownership: ownershipFromTags(tags),
      delta: [],
      ready: { ready: false, reason: Reason.Deleting },
      status: baseStatus(lb, arn),
      details: {
        found: 'loadBalancer',
        lb,
        listeners: [],
        rules: new Map(),
        targetGroups: [],
        attributes: new Map(),
        tags,
      },
    };
  }

  /** A live load balancer that is not being deleted: its children, the delta, readiness and status. */
  private async observeLive(
    mr: MyIngress,
    ctx: ReconcileContext,
    lb: LoadBalancer,
    arn: string,
  ): Promise<IngressObservation> {
    const certificates = await this.certificatesOf(mr);
    const held = heldListeners(mr.spec, certificates);
    const applied: MyIngress = { ...mr, spec: appliedSpec(mr.spec, certificates) };
    const { observed, delta, known } = await this.looks.look(applied, ctx, lb, arn, held);
    const {
      ownership,
      listeners,
      rules,
      targetGroups,
      attributes,
      tags,
      webAcl,
      securityGroup,
      egressPorts,
      strayTargetGroups,
    } = observed;
    const { selectedSubnets, failure } = await this.selectSubnets(mr, lb, known);
    if (selectedSubnets !== undefined && !sameSet(subnetsOf(lb), selectedSubnets))
      delta.push({ field: 'subnets', change: 'subnets (spec.subnetSelector)' });
    const lbReady = ingressReady(applied, lb, listeners, held);
    const backends = this.backendsReady(mr);
    // A load balancer still on its way is polled; a missing Service is not (its informer
    // event enqueues the object, and the engine looks again at the resync period); backends
    // not judged yet are looked at again once the caches can have listed.
    const polled = !lbReady.ready
      ? busyPollInterval(mr, this.d.pollMs, ctx.clock.now(), 60_000)
      : backends.judged
        ? undefined
        : this.d.pollMs;
    // Pods waiting for their target-health gate: their targets' health is read and looked at again soon.
    const gates =
      mr.spec.managementPolicy === 'ObserveOnly' ? undefined : await this.gates.look(mr, targetGroups);
    const requeueAfterMs =
      gates?.waiting === true ? Math.min(polled ?? this.d.gatePollMs, this.d.gatePollMs) : polled;
    return {
      exists: true,
      ownership,
      delta,
      // A host without a certificate first: the listener waits for a person, as a backend would.
      ready: ingressReadiness(lbReady, certificatesReady(certificates) ?? backends.ready),
      status: ingressStatus(
        {
          ...baseStatus(lb, arn),
          ...(securityGroup?.group !== undefined ? { managedSecurityGroup: securityGroup.group.id } : {}),
        },
        listeners,
        rules,
        targetGroups,
      ),
      details: {
        found: 'loadBalancer',
        lb,
        listeners,
        rules,
        targetGroups,
        attributes,
        tags,
        known,
        ...(selectedSubnets !== undefined ? { selectedSubnets } : {}),
        ...(webAcl !== undefined ? { webAcl } : {}),
        ...(certificates !== undefined ? { certificates } : {}),
        ...(securityGroup !== undefined ? { securityGroup } : {}),
        egressPorts,
        ...(strayTargetGroups !== undefined ? { strayTargetGroups } : {}),
      },
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
      ...(failure !== undefined ? { failure } : {}),
      ...(gates !== undefined && gates.writes.length > 0 ? { writes: { podConditions: gates.writes } } : {}),
    };
  }

  /**
   * The certificates ACM has for the spec's certificateHosts, from the list the account and region
   * share (one ListCertificates per period for every object: acm.ts); undefined when no listener
   * names hosts. Read-only.
   */
  private async certificatesOf(mr: MyIngress): Promise<CertificateResolution | undefined> {
    if (!usesCertificateHosts(mr.spec)) return undefined;
    const c = this.d.certificates;
    return resolveCertificateHosts(mr.spec, c.region, async (host) => (await c.forHost(host))?.arn);
  }

  /**
   * The subnets `spec.subnetSelector` matches now (DescribeSubnets), resolved at every look at a
   * load balancer that is not provisioning — a resync included, so subnets tagged or untagged in
   * EC2 since move it — and whenever the spec changed or the children were described in full.
   * Fewer than two: no subnets (the load balancer stays where it is) and a failure naming the
   * selector. Nothing without a selector, or under ObserveOnly. Read-only.
   */
  private async selectSubnets(
    mr: MyIngress,
    lb: LoadBalancer,
    known: KnownChildren,
  ): Promise<{ selectedSubnets?: string[]; failure?: { reason: string; message: string } }> {
    if (mr.spec.subnetSelector === undefined || mr.spec.managementPolicy === 'ObserveOnly') return {};
    const due =
      lb.State?.Code !== 'provisioning' ||
      mr.status?.observedGeneration !== mr.metadata.generation ||
      known.origin === 'described';
    if (!due) return {};
    const ids = await this.loadBalancers.selected(mr);
    if (ids.length >= 2) return { selectedSubnets: ids };
    return {
      failure: {
        reason: IngressReason.SubnetSelectorTooNarrow,
        message: `${selectorTooNarrow(ids.length)}; the load balancer stays in ${subnetsOf(lb).join(', ')}`,
      },
    };
  }

  /**
   * Whether the Services the spec forwards to exist with those ports
   * (`ready` undefined when they all do), from the caches once they have
   * listed (`judged`); until then, the verdict already recorded, if any.
   */
  private backendsReady(mr: MyIngress): { judged: boolean; ready: ReadyState | undefined } {
    if (!this.d.backendCachesSynced())
      return {
        judged: false,
        ready: carriedBackendsReady(
          getCondition(mr.status?.conditions, ConditionType.Ready),
          mr.metadata.generation,
        ),
      };
    const ns = mr.metadata.namespace ?? '';
    const missing = missingBackends(mr.spec, (name) => this.d.service(ns, name));
    return { judged: true, ready: missingBackendsReady(missing, ns) };
  }
}

/** A load balancer's identity and state, the start of the status. Pure. */
function baseStatus(lb: LoadBalancer, arn: string): KindStatusOf<MyIngress> {
  return {
    arn,
    dnsName: lb.DNSName,
    canonicalHostedZoneId: lb.CanonicalHostedZoneId,
    state: lb.State?.Code ?? 'provisioning',
    securityGroups: lb.SecurityGroups ?? [],
  };
}
