import type { LoadBalancer } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { MyIngress } from './api.ts';
import { ownershipFromTags, type OwnershipTags } from '../../apis/managed.ts';
import type { Created, ExistingObservation, ExternalClient, Observation } from '../../runtime/adapter.ts';
import {
  busyObservation,
  type ReadyState,
  type ReconcileContext,
  type Updated,
} from '../../runtime/adapter.ts';
import { ConditionType, getCondition, Reason } from '../../runtime/conditions.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import { ingressDelta, type MyIngressField } from './delta.ts';
import type { IngressUpdate, MyIngressAdapterDeps } from './deps.ts';
import { tagsOf } from './elbv2.ts';
import { Listeners } from './listeners.ts';
import { LoadBalancers } from './loadBalancer.ts';
import { loadBalancerName } from './names.ts';
import { ingressReadiness, ingressReady, ingressStatus, type MyIngressDetails } from './observation.ts';
import { carriedBackendsReady, missingBackends, missingBackendsReady } from './backends.ts';
import type { ServiceLike } from './desired.ts';
import { Teardown } from './teardown.ts';
import { TargetGroups } from './targetGroups.ts';

export type { MyIngressField } from './delta.ts';
export type { MyIngressDetails } from './observation.ts';

type IngressObservation = ExistingObservation<MyIngressDetails, MyIngressField>;

/** A live load balancer as observe has found it so far. */
interface FoundLoadBalancer {
  readonly lb: LoadBalancer;
  readonly arn: string;
  readonly tags: Record<string, string>;
  readonly ownership: OwnershipTags | undefined;
  /** Its identity and state, the start of the status. */
  readonly base: Record<string, unknown>;
}

/**
 * MyIngress's AWS side: an Application Load Balancer with its listeners,
 * rules, one IP target group per backend Service port, and the Services'
 * ready endpoints as targets. Found by recorded ARN, externalName or its
 * deterministic name; children by listing the load balancer and by
 * deterministic target group names; updates are minimal (one changed rule is
 * one ModifyRule). Deletion removes rules, listeners, the load balancer and
 * then the target groups AWS would leave behind.
 */
export class MyIngressAdapter implements ExternalClient<MyIngress, MyIngressDetails, MyIngressField> {
  private readonly d: MyIngressAdapterDeps;
  private readonly loadBalancers: LoadBalancers;
  private readonly listeners: Listeners;
  private readonly targetGroups: TargetGroups;
  private readonly teardown: Teardown;

  constructor(deps: MyIngressAdapterDeps) {
    this.d = deps;
    this.loadBalancers = new LoadBalancers(deps);
    this.listeners = new Listeners(deps);
    this.targetGroups = new TargetGroups(deps);
    this.teardown = new Teardown(deps, this.targetGroups);
  }

  async observe(
    mr: MyIngress,
    ctx: ReconcileContext,
  ): Promise<Observation<MyIngressDetails, MyIngressField>> {
    const lb = await this.loadBalancers.find(mr);
    if (lb?.LoadBalancerArn === undefined) return this.observeLeftovers(mr, ctx);
    const arn = lb.LoadBalancerArn;
    const tags = (await tagsOf(this.d.tagDescriber, [arn])).get(arn) ?? {};
    const ownership = ownershipFromTags(tags);
    const base: Record<string, unknown> = {
      arn,
      dnsName: lb.DNSName,
      canonicalHostedZoneId: lb.CanonicalHostedZoneId,
      state: lb.State?.Code ?? 'provisioning',
    };
    if (mr.metadata.deletionTimestamp !== undefined) {
      return {
        exists: true,
        ownership,
        delta: [],
        ready: { ready: false, reason: Reason.Deleting },
        status: base,
        details: {
          found: 'loadBalancer',
          lb,
          listeners: [],
          rules: new Map(),
          targetGroups: [],
          attributes: new Map(),
        },
      };
    }
    return this.observeLive(mr, ctx, { lb, arn, tags, ownership, base });
  }

  async create(mr: MyIngress, ctx: ReconcileContext): Promise<Created> {
    const name = loadBalancerName(mr.metadata.namespace ?? '', mr.metadata.name, ctx.ownership.uid);
    const lb = await this.loadBalancers.create(mr, ctx, name);
    return {
      status: {
        arn: lb?.LoadBalancerArn,
        dnsName: lb?.DNSName,
        canonicalHostedZoneId: lb?.CanonicalHostedZoneId,
        state: lb?.State?.Code,
      },
      description: `created load balancer ${name}`,
    };
  }

  async update(mr: MyIngress, observed: IngressObservation, ctx: ReconcileContext): Promise<Updated> {
    const d = observed.details;
    if (d.found !== 'loadBalancer') return { description: 'nothing to change' };
    const u: IngressUpdate = { mr, ctx, lb: d.lb, arn: d.lb.LoadBalancerArn ?? '', done: [] };
    await this.loadBalancers.tagOwnership(u, observed.ownership);
    await this.loadBalancers.syncUserTags(u, observed.ownership, observed.delta);
    await this.loadBalancers.syncIpAddressType(u);
    await this.loadBalancers.syncSecurityGroups(u);
    await this.loadBalancers.syncSubnets(u);
    await this.loadBalancers.syncAttributes(u, d.attributes);
    // Target groups first: listeners and rules point at them.
    const tgArns = await this.targetGroups.sync(u, d.targetGroups);
    const listenerArns = await this.listeners.sync(u, d.listeners, tgArns);
    await this.listeners.syncRules(u, d.rules, listenerArns, tgArns);
    await this.listeners.deleteUnwanted(u, d.listeners);
    // Target groups no longer referenced (recorded in status) go last.
    await this.targetGroups.deleteUnused(u, new Set(tgArns.values()));
    return { description: u.done.length > 0 ? u.done.join('; ') : 'nothing to change' };
  }

  async delete(mr: MyIngress, observed: IngressObservation): Promise<{ gone: boolean }> {
    return this.teardown.delete(mr, observed.details);
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
    const leftovers = await this.targetGroups.owned(mr);
    if (leftovers.length === 0) return { exists: false };
    return busyObservation({
      ownership: ctx.ownership,
      reason: Reason.Deleting,
      message: `deleting ${leftovers.length} target group(s) left after the load balancer`,
      status: {},
      details: { found: 'leftovers', leftoverTargetGroups: leftovers },
    });
  }

  /** A live load balancer that is not being deleted: its children, the delta, readiness and status. */
  private async observeLive(
    mr: MyIngress,
    ctx: ReconcileContext,
    found: FoundLoadBalancer,
  ): Promise<IngressObservation> {
    const { lb, arn, tags, ownership, base } = found;
    const { listeners, rules } = await this.listeners.observe(arn);
    const attributes = await this.loadBalancers.attributes(arn);
    const targetGroups = await this.targetGroups.observe(mr, ctx, arn);
    const delta = ingressDelta(mr, ctx.ownership, {
      ownership,
      lb,
      listeners,
      rules,
      targetGroups,
      attributes,
      tags,
    });
    const lbReady = ingressReady(mr, lb, listeners);
    const backends = this.backendsReady(mr);
    // A load balancer still on its way is polled; a missing Service is not (its informer
    // event enqueues the object, and the engine looks again at the resync period); backends
    // not judged yet are looked at again once the caches can have listed.
    const requeueAfterMs = !lbReady.ready
      ? busyPollInterval(mr, this.d.pollMs, ctx.clock.now(), 60_000)
      : backends.judged
        ? undefined
        : this.d.pollMs;
    return {
      exists: true,
      ownership,
      delta,
      ready: ingressReadiness(lbReady, backends.ready),
      status: ingressStatus(base, listeners, rules, targetGroups),
      details: { found: 'loadBalancer', lb, listeners, rules, targetGroups, attributes },
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
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
    const missing = missingBackends(mr.spec, (name) => this.d.service(ns, name) as ServiceLike | undefined);
    return { judged: true, ready: missingBackendsReady(missing, ns) };
  }
}
