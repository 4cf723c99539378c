// What observe makes of a live load balancer: the record it hands to update
// and delete, whether the load balancer is Ready, and the status it reports.
import type { Listener, LoadBalancer, Rule } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { ReadyState } from '../../runtime/adapter.ts';
import { Reason } from '../../runtime/conditions.ts';
import type { MyIngress } from './api.ts';
import type { KindStatusOf } from '../../apis/managed.ts';
import type { ObservedTargetGroup } from './delta.ts';
import type { ChildrenOrigin } from '../../runtime/childMemory.ts';
import type { WebAclSeen } from './webAclPlan.ts';
import type { CertificateResolution } from './certificateHosts.ts';
import type { ManagedGroupLook } from './securityGroupPlan.ts';

/** Ready reasons particular to MyIngress. */
export const IngressReason = {
  Provisioning: 'Provisioning',
  Failed: 'Failed',
  Available: Reason.Available,
  /** Synced=False: spec.subnetSelector matches fewer than two subnets; the load balancer stays where it is. */
  SubnetSelectorTooNarrow: 'SubnetSelectorTooNarrow',
} as const;

/** How observe knew a live load balancer's children (see looks.ts and memory.ts). */
export interface KnownChildren {
  readonly origin: ChildrenOrigin;
  /** When a full look or the create established them (the engine's clock, ms). */
  readonly since: number;
}

/** What observe found, handed back to update and delete. */
export type MyIngressDetails =
  /** A member of a MyIngressGroup: its load balancer is the group's (group/member.ts). */
  | { readonly found: 'member' }
  /** A live load balancer; its children are looked at only when the object is not being deleted. */
  | {
      readonly found: 'loadBalancer';
      readonly lb: LoadBalancer;
      readonly listeners: readonly Listener[];
      readonly rules: ReadonlyMap<string, readonly Rule[]>;
      readonly targetGroups: readonly ObservedTargetGroup[];
      readonly attributes: ReadonlyMap<string, string>;
      /** The load balancer's tags. */
      readonly tags: Readonly<Record<string, string>>;
      /** How the children were known; absent while deleting (not looked at). */
      readonly known?: KnownChildren;
      /** The subnets spec.subnetSelector matches, when observe resolved it (see observeLive). */
      readonly selectedSubnets?: readonly string[];
      /** The web ACL attached, when it was read (see webAclNeeded). */
      readonly webAcl?: WebAclSeen | undefined;
      /** The certificates found for spec.listeners[].certificateHosts; undefined when none names hosts. */
      readonly certificates?: CertificateResolution | undefined;
      /** The managed security group, when it was read (see managedGroupLookNeeded). */
      readonly securityGroup?: ManagedGroupLook | undefined;
      /** The ports the targets listen on, when known (the managed group's outbound rules). */
      readonly egressPorts?: readonly number[] | undefined;
      /** Target groups of ours the spec does not want, found by tag at a full look (ARNs). */
      readonly strayTargetGroups?: readonly string[] | undefined;
    }
  /** Only target groups, or the managed security group, are left of a deleted object. */
  | {
      readonly found: 'leftovers';
      readonly leftoverTargetGroups: string[];
      /** The managed security group's ID, when it is left. */
      readonly leftoverSecurityGroup?: string;
    };

/**
 * Whether the load balancer is usable: Ready when it is active and every
 * listener the spec asks for exists; otherwise why not (failed, or still
 * provisioning and with which listeners to come). A listener in `held` (held back for a
 * certificate, see certificateHosts.ts) is not waited for: its own Ready reason says why. Pure.
 */
export function ingressReady(
  mr: MyIngress,
  lb: LoadBalancer,
  listeners: readonly Listener[],
  held: ReadonlySet<number> = new Set(),
): ReadyState {
  const state = lb.State?.Code ?? 'provisioning';
  const awaited = (mr.spec.listeners ?? []).filter((w) => !held.has(w.port));
  if (state === 'active' && awaited.every((w) => listeners.some((l) => l.Port === w.port)))
    return { ready: true, reason: IngressReason.Available };
  if (state === 'failed')
    return {
      ready: false,
      reason: IngressReason.Failed,
      message: lb.State?.Reason ?? 'the load balancer failed',
    };
  return {
    ready: false,
    reason: IngressReason.Provisioning,
    message:
      state === 'active'
        ? `load balancer is active; creating listeners on ${awaited
            .filter((w) => !listeners.some((l) => l.Port === w.port))
            .map((w) => `${w.protocol}:${w.port}`)
            .join(', ')}`
        : `load balancer is ${state}`,
  };
}

/**
 * The object's readiness from its load balancer's (`lb`, see ingressReady)
 * and its backends' (`backends`: a missing Service, or undefined when all are
 * there or cannot be judged yet): a failed load balancer first, then missing
 * backends — a person must act, which is worth saying while the load
 * balancer still provisions — then the load balancer's own. Pure.
 */
export function ingressReadiness(lb: ReadyState, backends: ReadyState | undefined): ReadyState {
  if (lb.reason === IngressReason.Failed || backends === undefined) return lb;
  return backends;
}

/**
 * The status of a live load balancer: `base` (its identity and state), then
 * its listeners by port, its rules by priority and the target groups that
 * exist with their registered target counts. Pure.
 */
export function ingressStatus(
  base: KindStatusOf<MyIngress>,
  listeners: readonly Listener[],
  rules: ReadonlyMap<string, readonly Rule[]>,
  targetGroups: readonly ObservedTargetGroup[],
): KindStatusOf<MyIngress> {
  return {
    ...base,
    listeners: listeners
      .map((l) => ({ port: l.Port, arn: l.ListenerArn }))
      .sort((a, b) => (a.port ?? 0) - (b.port ?? 0)),
    rules: [...rules.entries()]
      .flatMap(([larn, rs]) =>
        rs.map((r) => ({
          listenerPort: listeners.find((l) => l.ListenerArn === larn)?.Port,
          priority: Number(r.Priority),
          arn: r.RuleArn,
        })),
      )
      .sort((a, b) => a.priority - b.priority),
    targetGroups: targetGroups
      .filter((t) => t.tg !== undefined)
      .map((t) => ({
        service: t.want.service,
        port: t.want.port,
        arn: t.tg?.TargetGroupArn,
        registeredTargets: t.registered.length,
      })),
  };
}
