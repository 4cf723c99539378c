// A MyIngress with spec.group: its load balancer is its group's, which the MyIngressGroup
// controller reconciles. The member's own reconcile touches no AWS: it reports what the group's
// status says of it, and on deletion keeps its finalizer until the group no longer lists it
// (its rules and target groups are gone: releasableMembers) or the group is gone. A group the
// Gateway API front end made for a Gateway takes HTTPRoutes and GRPCRoutes only: naming one is Terminal.
import type { KindStatusOf } from '../../../apis/managed.ts';
import type {
  Created,
  ExternalClient,
  Observation,
  ReadyState,
  ReconcileContext,
  Updated,
} from '../../../runtime/adapter.ts';
import { ConditionType, getCondition, Reason } from '../../../runtime/conditions.ts';
import { RetryableError, TerminalError } from '../../../runtime/errors.ts';
import type { MyIngress } from '../api.ts';
import type { MyIngressDetails } from '../observation.ts';
import type { MyIngressField } from '../delta.ts';
import { gatewayAnnotation, gatewayUidLabel } from '../gateway/names.ts';
import { MemberState, type GroupMemberStatus, type MyIngressGroup } from './api.ts';

/** A member's reasons beside the engine's. */
export const MemberReason = {
  /** The group it names does not exist. */
  GroupNotFound: 'GroupNotFound',
  /** The group has not taken this generation of its rules yet. */
  Joining: 'Joining',
  /** The group does not admit its namespace. */
  NotAdmitted: 'NotAdmitted',
  /** A rule names a port the group has no listener on. */
  InvalidRules: 'InvalidRules',
} as const;

/** What a member reads: its group from the MyIngress controller's cache. */
export interface MemberDeps {
  /** The cached MyIngressGroup of that name, or undefined. */
  readonly group: (name: string) => MyIngressGroup | undefined;
  /** True once the group cache has listed. */
  readonly synced: () => boolean;
  /** How soon to look again while the group has not taken this generation. */
  readonly pollMs: number;
}

type MemberObservation = Observation<MyIngressDetails, MyIngressField, KindStatusOf<MyIngress>>;

/**
 * The ExternalClient of a MyIngress with spec.group: observe reads the group's status (never AWS);
 * create, update and delete change nothing (the group does). Non-blocking and idempotent.
 */
export class GroupMemberClient implements ExternalClient<MyIngress, MyIngressDetails, MyIngressField> {
  private readonly d: MemberDeps;

  constructor(deps: MemberDeps) {
    this.d = deps;
  }

  observe(mr: MyIngress, ctx: ReconcileContext): Promise<MemberObservation> {
    // A throw of look's (a wait, a Terminal refusal) is a rejection, as an async observe's would be.
    return new Promise((resolve) => {
      resolve(this.look(mr, ctx));
    });
  }

  private look(mr: MyIngress, ctx: ReconcileContext): MemberObservation {
    const name = mr.spec.group?.name ?? '';
    if (!this.d.synced())
      throw new RetryableError(Reason.ReconcileError, 'waiting for the MyIngressGroup cache to list');
    const group = this.d.group(name);
    const entry = group?.status?.members?.find((m) => m.uid === mr.metadata.uid);
    const base = {
      exists: true as const,
      ownership: ctx.ownership,
      delta: [],
      details: { found: 'member' as const },
    };
    if (mr.metadata.deletionTimestamp !== undefined) {
      // Let go once the group no longer lists it: nothing of it is left on the load balancer.
      if (group === undefined || entry === undefined) return { exists: false };
      return {
        ...base,
        ready: {
          ready: false,
          reason: Reason.Deleting,
          message: `waiting for MyIngressGroup ${name} to remove this object’s rules and target groups`,
        },
        status: {},
        requeueAfterMs: this.d.pollMs,
      };
    }
    if (group === undefined)
      return {
        ...base,
        ready: {
          ready: false,
          reason: MemberReason.GroupNotFound,
          message: `MyIngressGroup ${name} does not exist; a cluster administrator (whoever may create MyIngressGroup objects) can create it, or name another group in spec.group`,
          actionRequired: true,
        },
        status: {},
      };
    const gateway = gatewayOf(group);
    if (gateway !== undefined)
      throw new TerminalError(
        `MyIngressGroup ${name} belongs to Gateway ${gateway}: its members are the HTTPRoutes attached to that Gateway, never MyIngresses, so this object would wait forever. Attach an HTTPRoute to the Gateway (spec.parentRefs) instead, or name a MyIngressGroup of your cluster administrator's in spec.group`,
      );
    const status = memberStatus(group);
    if (
      entry === undefined ||
      entry.observedGeneration !== mr.metadata.generation ||
      entry.state === MemberState.Leaving
    )
      return {
        ...base,
        ready: {
          ready: false,
          reason: MemberReason.Joining,
          message: `waiting for MyIngressGroup ${name} to take generation ${mr.metadata.generation ?? 0} of this object’s rules`,
        },
        status,
        requeueAfterMs: this.d.pollMs,
      };
    const refused = refusal(entry);
    if (refused !== undefined)
      return {
        ...base,
        ready: { ready: false, reason: refused.reason, message: refused.message },
        status,
        failure: refused,
      };
    return { ...base, ready: groupReady(group, name), status };
  }

  create(): Promise<Created<KindStatusOf<MyIngress>>> {
    // observe always reports the member as existing: the engine never asks to create it.
    return Promise.reject(
      new TerminalError('a member of a MyIngressGroup has no load balancer of its own to create'),
    );
  }

  update(): Promise<Updated> {
    return Promise.resolve({
      description: 'nothing to change (the group’s load balancer carries the rules)',
    });
  }

  delete(): Promise<{ gone: boolean }> {
    // Gone once the group no longer lists this object (observe then reports it absent).
    return Promise.resolve({ gone: false });
  }
}

/**
 * The Gateway (`namespace/name`, from the `skylift.dev/gateway` annotation) whose group `group` is,
 * when the Gateway API front end made it (label `skylift.dev/gateway-uid`); undefined for a
 * MyIngressGroup of a cluster administrator's. Pure.
 */
export function gatewayOf(group: MyIngressGroup): string | undefined {
  const uid = group.metadata.labels?.[gatewayUidLabel];
  if (uid === undefined) return undefined;
  const key = group.metadata.annotations?.[gatewayAnnotation];
  return key !== undefined && key !== '' ? key : `of uid ${uid}`;
}

/** A refused member's Synced reason and message, or undefined when it is Attached. Pure. */
function refusal(e: GroupMemberStatus): { reason: string; message: string } | undefined {
  const message = e.message ?? '';
  switch (e.state) {
    case MemberState.Conflict:
      return { reason: Reason.Conflict, message };
    case MemberState.NotAdmitted:
    case MemberState.Forbidden:
      return { reason: Reason.Forbidden, message };
    case MemberState.Invalid:
      return { reason: MemberReason.InvalidRules, message };
    default:
      return undefined;
  }
}

/** A member is Ready when its group is (its load balancer is shared). Pure. */
function groupReady(group: MyIngressGroup, name: string): ReadyState {
  const ready = getCondition(group.status?.conditions, ConditionType.Ready);
  if (ready?.status === 'True') return { ready: true, reason: Reason.Available };
  return {
    ready: false,
    reason: ready?.reason ?? Reason.Creating,
    message: `MyIngressGroup ${name} is not Ready${ready?.message !== undefined ? `: ${ready.message}` : ''}`,
  };
}

/** The load balancer's identity a member reports (a DNSRecord may alias it). Pure. */
function memberStatus(group: MyIngressGroup): KindStatusOf<MyIngress> {
  const s = group.status ?? {};
  return {
    ...(s.arn !== undefined ? { arn: s.arn } : {}),
    ...(s.dnsName !== undefined ? { dnsName: s.dnsName } : {}),
    ...(s.canonicalHostedZoneId !== undefined ? { canonicalHostedZoneId: s.canonicalHostedZoneId } : {}),
    ...(s.state !== undefined ? { state: s.state } : {}),
  };
}
