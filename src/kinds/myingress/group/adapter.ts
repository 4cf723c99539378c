// A MyIngressGroup's AWS side: the shared load balancer, applied by the MyIngress machinery (the
// same adapter a MyIngress's own load balancer has) to the merged spec plan.ts makes of the group
// and its granted members. What is the group's own here: who the members are and how they stand,
// the member tags on the children made for each, keeping a member that left listed until its
// rules are gone, and the last member out deleting the load balancer (sharedResource.ts).
import type {
  ExistingObservation,
  ExternalClient,
  Observation,
  ReconcileContext,
  Updated,
} from '../../../runtime/adapter.ts';
import { RetryableError } from '../../../runtime/errors.ts';
import { Reason } from '../../../runtime/conditions.ts';
import type { KindStatusOf } from '../../../apis/managed.ts';
import {
  sharedGroupTagKey,
  sharedMemberTagKey,
  sharedResourceStep,
} from '../../../runtime/sharedResource.ts';
import type { MyIngress } from '../api.ts';
import type { MyIngressDetails, MyIngressField } from '../adapter.ts';
import type { IngressContext } from '../deps.ts';
import { MemberState, myIngressGroupType, type GroupMemberStatus, type MyIngressGroup } from './api.ts';
import { groupMember, planGroup, type GroupPlan, type GroupPlanOptions } from './plan.ts';
import { refusedMember, standingRefusals, withRefusedMembers, type MemberRefusal } from './refusedMembers.ts';
import { GroupCertificates } from './certificates.ts';
import type { MemberTenancyJudge } from './tenancy.ts';
import { TerminalError } from '../../../runtime/errors.ts';

/** A group's fields that differ: the load balancer's (MyIngress's), or `members` (one to let go). */
export type GroupField = MyIngressField | 'members';

/** The group's own reasons. */
export const GroupReason = {
  /** No MyIngress names the group: it has no load balancer (the object stays). */
  NoMembers: 'NoMembers',
  /** AWS refused a member's rules: it is left off the load balancer (refusedMembers.ts). */
  MemberRefused: 'MemberRefused',
} as const;

/** What observe hands update and delete. */
export type GroupDetails =
  /** The load balancer for the merged spec, as the MyIngress adapter observed it. */
  | {
      readonly kind: 'live';
      readonly merged: MyIngress;
      readonly observed: ExistingObservation<MyIngressDetails, MyIngressField, KindStatusOf<MyIngress>>;
      readonly plan: GroupPlan;
      /** TLS Secrets (`namespace/name`) to import before the spec can be applied. */
      readonly pendingCertificates: readonly string[];
    }
  /** No member stays: the load balancer (observed for deletion) goes, or is already gone. */
  | {
      readonly kind: 'noMembers';
      readonly merged: MyIngress;
      readonly observed?: ExistingObservation<MyIngressDetails, MyIngressField, KindStatusOf<MyIngress>>;
    };

type GroupObservation = Observation<GroupDetails, GroupField, KindStatusOf<MyIngressGroup>>;

/** What the group adapter reads from the controller's caches. */
export interface GroupAdapterDeps {
  /** The MyIngresses filed under the group (naming it now, or deleted while naming it). */
  readonly members: (group: MyIngressGroup) => readonly MyIngress[];
  /** A namespace's labels (undefined: not cached). */
  readonly namespaceLabels: (namespace: string) => Readonly<Record<string, string>> | undefined;
  /** True once the member (and namespace) caches have listed: before, a member may be missing. */
  readonly synced: () => boolean;
  /** How the members are planned (default: MyIngress members; a Gateway's routes differ). */
  readonly planOptions?: GroupPlanOptions;
  /**
   * True: the load balancer stays while no member does (a Gateway is Programmed, with an address,
   * before any route attaches). Default false: the last member out deletes it.
   */
  readonly keepWithoutMembers?: boolean;
  /** Serves listeners[].certificateRefs (absent: a group naming Secrets is refused). */
  readonly certificates?: GroupCertificates;
  /**
   * How a member namespace's tenancy stands with the group (group/tenancy.ts); absent: every
   * namespace is served (no TeamPolicies). May look up AWS (reads); throws to retry.
   */
  readonly memberTenancy?: MemberTenancyJudge;
}

/**
 * The MyIngressGroup adapter: plans the merged spec, then observes, creates, updates and deletes
 * the load balancer through `ingress` (the MyIngress adapter, for the operator's own AWS identity)
 * as if the merged spec were one MyIngress's — its uid the group's, its name the group's. Each
 * rule and target group made for a member carries `skylift.dev/group` and `skylift.dev/member`.
 * Idempotent as the MyIngress adapter is; reads the caches only through `deps`.
 */
export class MyIngressGroupAdapter implements ExternalClient<MyIngressGroup, GroupDetails, GroupField> {
  private readonly ingress: ExternalClient<MyIngress, MyIngressDetails, MyIngressField>;
  private readonly d: GroupAdapterDeps;
  /** Groups (uid) this adapter imported Secrets for since its start, and those whose imports it released. */
  private readonly imported = new Set<string>();
  private readonly released = new Set<string>();
  /** Members whose rules AWS refused, by group uid then member uid (refusedMembers.ts). */
  private readonly refusals = new Map<string, Map<string, MemberRefusal>>();

  constructor(ingress: ExternalClient<MyIngress, MyIngressDetails, MyIngressField>, deps: GroupAdapterDeps) {
    this.ingress = ingress;
    this.d = deps;
  }

  async observe(group: MyIngressGroup, ctx: ReconcileContext): Promise<GroupObservation> {
    if (!this.d.synced())
      throw new RetryableError(
        Reason.ReconcileError,
        'waiting for the MyIngress and Namespace caches to list',
      );
    const deleting = group.metadata.deletionTimestamp !== undefined;
    // A guardrail never blocks a deletion: a group being deleted is planned without judging tenancy.
    const plan = deleting
      ? planGroup(group, this.d.members(group), this.d.namespaceLabels, this.d.planOptions)
      : await this.plan(group, ctx.clock.now());
    const wanted = plan.wanted || this.d.keepWithoutMembers === true;
    const refs = GroupCertificates.refsOf(group.spec.listeners);
    if (deleting) {
      const merged = mergedIngress(group, plan, true);
      const observed = await this.ingress.observe(merged, ctx);
      if (observed.exists)
        return { ...observed, delta: [], details: { kind: 'noMembers', merged, observed } };
      // The load balancer is gone; the Secrets' imports go next (delete), then the group.
      if (refs.length > 0 && this.d.certificates !== undefined && !this.released.has(ctx.ownership.uid))
        return {
          exists: true,
          ownership: ctx.ownership,
          delta: [],
          ready: { ready: false, reason: 'Deleting', message: 'deleting the imported certificates' },
          status: {},
          details: { kind: 'noMembers', merged },
        };
      return { exists: false };
    }
    const certs = await this.lookCertificates(group, plan, ctx);
    const merged = mergedIngress(group, { ...plan, spec: certs.spec }, !wanted);
    const observed = await this.ingress.observe(merged, ctx);
    const step = sharedResourceStep(wanted ? [{ leaving: false }] : [], observed.exists);
    if (step !== 'ensure') {
      // The last member is out: the load balancer goes (update), and the group waits for members.
      const ready = {
        ready: false,
        reason: GroupReason.NoMembers,
        message: `no MyIngress names MyIngressGroup ${group.metadata.name} (spec.group), so it has no load balancer; one is created when the first member joins`,
        actionRequired: true,
      };
      if (!observed.exists)
        return {
          exists: true,
          ownership: ctx.ownership,
          delta: [],
          ready,
          status: { members: [] },
          details: { kind: 'noMembers', merged },
        };
      return {
        exists: true,
        ownership: observed.ownership,
        delta: [{ field: 'members', change: 'no members: the load balancer is deleted' }],
        ready,
        status: { members: leavingMembers(group, plan, true) },
        details: { kind: 'noMembers', merged, observed },
      };
    }
    if (!observed.exists) return { exists: false };
    // A member that left stays listed (Leaving) until the load balancer matches a spec without it.
    const pending = observed.delta.length > 0;
    const toImport = certs.pending.map((p) => ({
      field: 'listeners' as const,
      change: `TLS Secret ${p} to import into ACM`,
    }));
    return {
      ...observed,
      delta: [...observed.delta, ...toImport],
      status: { ...observed.status, members: [...plan.members, ...leavingMembers(group, plan, pending)] },
      details: { kind: 'live', merged, observed, plan, pendingCertificates: certs.pending },
    };
  }

  /**
/**
   * The group's plan from its members as the caches hold them now: the members whose rules AWS
   * refused (still standing at `now`) left out and listed Invalid, and the tenancy of each staying
   * member's namespace judged once (memberTenancy; leaving members are not judged: their rules go
   * whatever their policy says). Reads the caches; the tenancy check may read AWS.
   */
  private async plan(group: MyIngressGroup, now: number): Promise<GroupPlan> {
    const members = this.d.members(group);
    const uid = group.metadata.uid ?? '';
    const standing = standingRefusals(this.refusals.get(uid)?.values() ?? [], members, now);
    if (standing.size > 0) this.refusals.set(uid, standing);
    else this.refusals.delete(uid);
    const candidates = members.filter((m) => !standing.has(m.metadata.uid ?? ''));
    const judge = this.d.memberTenancy;
    const staying = candidates.filter((m) => !groupMember(m, group.metadata.name).leaving);
    let options = this.d.planOptions;
    if (judge !== undefined && staying.length > 0) {
      const namespaces = [...new Set(staying.map((m) => m.metadata.namespace ?? ''))].sort();
      const tenancy = await judge(group, namespaces);
      options = {
        ...this.d.planOptions,
        refusal: (ns) => {
          // A namespace the judge did not answer for is refused: fail closed.
          const t = tenancy.get(ns) ?? {
            kind: 'refused',
            message: `the tenancy of namespace ${ns} is not known`,
          };
          return t.kind === 'refused' ? t.message : undefined;
        },
      };
    }
    const plan = planGroup(group, candidates, this.d.namespaceLabels, options);
    return withRefusedMembers(
      plan,
      members.flatMap((member) => {
        const refusal = standing.get(member.metadata.uid ?? '');
        return refusal !== undefined ? [{ member, refusal }] : [];
      }),
    );
  }

  /**
   * What a failed update of the load balancer becomes: AWS's terminal refusal of a child made for
   * one member (`child`, the last whose member tags were asked for) is that member's — remembered,
   * so the next pass (soon: a retryable error) leaves it off and applies the others; any other
   * failure is the group's, unchanged.
   */
  private refusing(
    group: MyIngressGroup,
    plan: GroupPlan,
    child: string | undefined,
    err: unknown,
    now: number,
  ): unknown {
    const refused = refusedMember(err, child, plan.attribution);
    if (refused === undefined) return err;
    const member = plan.granted.find((m) => m.metadata.uid === refused.uid);
    const uid = group.metadata.uid ?? '';
    const refusals = this.refusals.get(uid) ?? new Map<string, MemberRefusal>();
    refusals.set(refused.uid, {
      uid: refused.uid,
      generation: member?.metadata.generation,
      message: refused.message,
      at: now,
    });
    this.refusals.set(uid, refusals);
    const who =
      member !== undefined ? `member ${member.metadata.namespace ?? ''}/${member.metadata.name}` : 'a member';
    return new RetryableError(
      GroupReason.MemberRefused,
      `${refused.message}: ${who} is left off the load balancer and the other members' rules are applied next`,
      { cause: err },
    );
  }

  async create(
    group: MyIngressGroup,
    ctx: ReconcileContext,
  ): Promise<{ status: KindStatusOf<MyIngressGroup>; description?: string }> {
    const plan = await this.plan(group, ctx.clock.now());
    const certs = await this.ensureCertificates(group, plan, ctx);
    const created = await this.ingress.create(
      mergedIngress(group, { ...plan, spec: certs.spec }, false),
      ctx,
    );
    return {
      status: { ...created.status, members: plan.members },
      ...(created.description !== undefined ? { description: created.description } : {}),
    };
  }

  async update(
    group: MyIngressGroup,
    observed: ExistingObservation<GroupDetails, GroupField, KindStatusOf<MyIngressGroup>>,
    ctx: ReconcileContext,
  ): Promise<Updated> {
    const d = observed.details;
    if (d.kind === 'noMembers') {
      if (d.observed === undefined) return { description: 'nothing to change' };
      const res = await this.ingress.delete(d.merged, d.observed, ctx);
      if (res.gone) await this.releaseCertificates(group, [], ctx);
      return {
        description: res.gone
          ? 'no members: load balancer deleted'
          : 'no members: deleting the load balancer',
      };
    }
    const attribution = d.plan.attribution;
    /** The child whose member tags were asked for last: the one a create refused was making. */
    let last: string | undefined;
    const withTags: IngressContext = {
      ...ctx,
      childTags: (child) => {
        last = child;
        const member = attribution.get(child);
        return member !== undefined
          ? { [sharedGroupTagKey]: groupTag(group.metadata.name), [sharedMemberTagKey]: member }
          : {};
      },
    };
    const apply = async (merged: MyIngress, observed: typeof d.observed): Promise<Updated> => {
      try {
        return await this.ingress.update(merged, observed, withTags);
      } catch (err) {
        throw this.refusing(group, d.plan, last, err, ctx.clock.now());
      }
    };
    if (GroupCertificates.refsOf(group.spec.listeners).length === 0 && !this.imported.has(ctx.ownership.uid))
      return apply(d.merged, d.observed);
    // Secrets to serve: imported (or found current) first, then the spec with their ARNs applied,
    // looked at again (the observation was made without the new ARNs), then imports no longer
    // served deleted.
    const certs = await this.ensureCertificates(group, d.plan, ctx);
    const merged = mergedIngress(group, { ...d.plan, spec: certs.spec }, false);
    const fresh = d.pendingCertificates.length > 0 ? await this.ingress.observe(merged, ctx) : d.observed;
    if (!fresh.exists)
      throw new RetryableError(
        Reason.ReconcileError,
        'the load balancer went while its certificates were imported',
      );
    const updated = await apply(merged, fresh);
    await this.releaseCertificates(group, certs.arns, ctx);
    return updated;
  }

  /** The merged spec with the ARNs of Secrets imported before, and the Secrets still to import. */
  private async lookCertificates(
    group: MyIngressGroup,
    plan: GroupPlan,
    ctx: ReconcileContext,
  ): Promise<{ spec: GroupPlan['spec']; pending: string[] }> {
    if (GroupCertificates.refsOf(group.spec.listeners).length === 0) return { spec: plan.spec, pending: [] };
    if (this.d.certificates === undefined)
      throw new TerminalError('listeners[].certificateRefs is not served by this controller');
    return this.d.certificates.look(ctx.ownership, group.spec.listeners, plan.spec);
  }

  /** The merged spec with every Secret imported (ensure), and the ARNs it serves. */
  private async ensureCertificates(
    group: MyIngressGroup,
    plan: GroupPlan,
    ctx: ReconcileContext,
  ): Promise<{ spec: GroupPlan['spec']; arns: string[] }> {
    if (GroupCertificates.refsOf(group.spec.listeners).length === 0) return { spec: plan.spec, arns: [] };
    if (this.d.certificates === undefined)
      throw new TerminalError('listeners[].certificateRefs is not served by this controller');
    const out = await this.d.certificates.ensure(ctx.ownership, group.spec.listeners, plan.spec);
    this.imported.add(ctx.ownership.uid);
    this.released.delete(ctx.ownership.uid);
    return out;
  }

  /** Deletes the group's imports not in `keep` (all, with `[]`). */
  private async releaseCertificates(
    group: MyIngressGroup,
    keep: string[],
    ctx: ReconcileContext,
  ): Promise<void> {
    if (this.d.certificates === undefined) return;
    if (
      keep.length === 0 &&
      GroupCertificates.refsOf(group.spec.listeners).length === 0 &&
      !this.imported.has(ctx.ownership.uid)
    )
      return;
    await this.d.certificates.release(ctx.ownership, keep);
    if (keep.length === 0) {
      this.imported.delete(ctx.ownership.uid);
      this.released.add(ctx.ownership.uid);
    }
  }

  async delete(
    _group: MyIngressGroup,
    observed: ExistingObservation<GroupDetails, GroupField, KindStatusOf<MyIngressGroup>>,
    ctx: ReconcileContext,
  ): Promise<{ gone: boolean }> {
    const d = observed.details;
    if (d.observed === undefined) {
      await this.releaseCertificates(_group, [], ctx);
      return { gone: true };
    }
    const res = await this.ingress.delete(d.merged, d.observed, ctx);
    if (res.gone) await this.releaseCertificates(_group, [], ctx);
    return res;
  }
}

/** The value of the `skylift.dev/group` tag of a group's load balancer and children. Pure. */
export function groupTag(name: string): string {
  return `${myIngressGroupType.kind}/${name}`;
}

/**
 * The merged spec as a MyIngress the MyIngress adapter can apply: the group's name, uid and
 * status (its recorded load balancer and target groups), cluster-scoped (no namespace);
 * `deleting`: observed and deleted as a MyIngress being deleted. Pure.
 */
export function mergedIngress(group: MyIngressGroup, plan: GroupPlan, deleting: boolean): MyIngress {
  const { members: _members, ...status } = group.status ?? {};
  return {
    ...(group.apiVersion !== undefined ? { apiVersion: group.apiVersion } : {}),
    kind: 'MyIngress',
    metadata: {
      name: group.metadata.name,
      ...(group.metadata.uid !== undefined ? { uid: group.metadata.uid } : {}),
      ...(group.metadata.generation !== undefined ? { generation: group.metadata.generation } : {}),
      ...(group.metadata.creationTimestamp !== undefined
        ? { creationTimestamp: group.metadata.creationTimestamp }
        : {}),
      ...(deleting
        ? { deletionTimestamp: group.metadata.deletionTimestamp ?? new Date(0).toISOString() }
        : {}),
    },
    spec: {
      ...plan.spec,
      tags: { ...plan.spec.tags, [sharedGroupTagKey]: groupTag(group.metadata.name) },
      ...(group.spec.deletionPolicy !== undefined ? { deletionPolicy: group.spec.deletionPolicy } : {}),
      ...(group.spec.managementPolicy !== undefined ? { managementPolicy: group.spec.managementPolicy } : {}),
    },
    status,
  };
}

/**
 * The members the group listed before that no longer stay (deleted, moved to another group, or
 * no longer named): listed as Leaving while `pending` (the load balancer does not match the spec
 * without them yet), so their finalizers wait (member.ts). Pure.
 */
function leavingMembers(group: MyIngressGroup, plan: GroupPlan, pending: boolean): GroupMemberStatus[] {
  if (!pending) return [];
  const staying = new Set(plan.members.map((m) => m.uid));
  return (group.status?.members ?? [])
    .filter(
      (m) => !staying.has(m.uid) && (m.state === MemberState.Attached || m.state === MemberState.Leaving),
    )
    .map((m) => ({
      ...m,
      state: MemberState.Leaving,
      message: 'its rules and target groups are being removed',
      rules: m.rules,
    }));
}
