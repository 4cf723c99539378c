// A MyIngress's target groups (one IP target group per backend Service port)
// and their targets (the Services' ready endpoints): observing them, creating
// them, keeping health checks and targets in line, and deleting them.
import {
  CreateTargetGroupCommand,
  DeleteTargetGroupCommand,
  DeregisterTargetsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ModifyTargetGroupAttributesCommand,
  ModifyTargetGroupCommand,
  RegisterTargetsCommand,
  type TargetGroup,
  type TargetHealthDescription,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags, ownershipTagKeys, type OwnershipTags } from '../../apis/managed.ts';
import { createOrFind, lookup } from '../../providers/aws/calls.ts';
import { AwsReason, AwsTerminalError, hasErrorCode, toTypedAwsError } from '../../providers/aws/errors.ts';
import { ownedTagList, tagMap } from '../../providers/aws/tags.ts';
import { elbv2ErrorTable, isElbv2NotFound, isResourceInUse } from '../../providers/elbv2/errors.ts';
import type { ReconcileContext } from '../../runtime/adapter.ts';
import { planChildSet, planOf } from '../../runtime/childSet.ts';
import { ChildSetState } from '../../runtime/childSetState.ts';
import { RetryableError } from '../../runtime/errors.ts';
import type { TaggedResource } from '../../providers/aws/taggedResources.ts';
import type { MyIngress } from './api.ts';
import { healthCheckMatches, targetGroupTagsDiffer, type ObservedTargetGroup } from './delta.ts';
import { childTagList, type IngressContext, type IngressUpdate, type MyIngressAdapterDeps } from './deps.ts';
import {
  desiredTargetGroups,
  resolveTargets,
  targetGroupAttributeChanges,
  targetGroupAttributeDefaults,
  type DesiredTargetGroup,
} from './desired.ts';
import { elbv2Call, tagsOf, withTags } from './elbv2.ts';
import { syncUserTags, tagsAfter } from './userTags.ts';
import { registersBeforeReady } from './readinessGate.ts';

type TargetGroupDeps = Pick<
  MyIngressAdapterDeps,
  | 'elbv2'
  | 'elbv2Create'
  | 'tagDescriber'
  | 'taggedResources'
  | 'service'
  | 'endpointSlices'
  | 'backendCachesSynced'
  | 'gatedPod'
>;

/** The Tagging API's name for an ELBv2 target group. */
const targetGroupResourceType = 'elasticloadbalancing:targetgroup';

/**
 * The target groups of MyIngresses, found by deterministic name (and by the
 * ARNs recorded in status) — and, at full looks and deletion, by their
 * ownership tags (the Tagging API), so that one created but never recorded
 * (the operator killed between CreateTargetGroup and the status write) is
 * found again once the spec no longer names it — and their targets, wanted
 * from the cached Services and EndpointSlices. Reads throw typed errors when
 * AWS cannot be asked; every write is idempotent.
 */
export class TargetGroups {
  private readonly d: TargetGroupDeps;
  /** Whether the refusal of tag:GetResources was logged (once per set of AWS clients). */
  private tagLookupDeniedWarned = false;

  constructor(deps: TargetGroupDeps) {
    this.d = deps;
  }

  /**
   * Each target group the spec needs, as AWS has it (attached to the load
   * balancer `lbArn`, or found by its name): the group if it exists, its
   * registered targets (draining ones excluded), its attributes (one
   * DescribeTargetGroupAttributes each) and the targets wanted. Read-only.
   */
  async observe(mr: MyIngress, ctx: ReconcileContext, lbArn: string): Promise<ObservedTargetGroup[]> {
    // AWS answers "not found" (not an empty list) when no target group is attached yet.
    const attached = await this.d.elbv2
      .send(new DescribeTargetGroupsCommand({ LoadBalancerArn: lbArn }))
      .then(
        (o) => o.TargetGroups ?? [],
        (err: unknown) => {
          if (isElbv2NotFound(err)) return [];
          throw toTypedAwsError('describe target groups', err, elbv2ErrorTable);
        },
      );
    const out: ObservedTargetGroup[] = [];
    for (const want of desiredTargetGroups(mr.spec, ctx.ownership.uid)) {
      const tg = attached.find((t) => t.TargetGroupName === want.name) ?? (await this.byName(want.name));
      const registered = tg?.TargetGroupArn !== undefined ? await this.registered(tg.TargetGroupArn) : [];
      const attributes =
        tg?.TargetGroupArn !== undefined ? await this.attributes(tg.TargetGroupArn) : undefined;
      out.push({ want, tg, registered, wanted: this.wantedTargets(mr, want), attributes });
    }
    return out;
  }

  /**
   * The target groups that exist and carry this object's ownership tags (`ours`): those recorded in
   * its status, those at its deterministic names, and those the Tagging API lists with its uid
   * (tagged, see {@link tagged}), each once. Read-only; throws a typed error when AWS cannot be asked.
   */
  async owned(mr: MyIngress, ctx: TagLookupContext): Promise<string[]> {
    const uid = mr.metadata.uid ?? '';
    const arns = new Set<string>();
    for (const recorded of recordedTargetGroups(mr)) {
      const tg = await this.by({ TargetGroupArns: [recorded] });
      if (tg?.TargetGroupArn !== undefined) arns.add(tg.TargetGroupArn);
    }
    for (const want of desiredTargetGroups(mr.spec, uid)) {
      const tg = await this.by({ Names: [want.name] });
      if (tg?.TargetGroupArn !== undefined) arns.add(tg.TargetGroupArn);
    }
    const found =
      arns.size === 0
        ? []
        : await tagsOf(this.d.tagDescriber, [...arns]).then((tags) =>
            [...arns].filter((a) => ownershipFromTags(tags.get(a) ?? {})?.uid === uid),
          );
    // The Tagging API may not list one created moments ago: the lookups above stay the authority.
    return [...new Set([...found, ...(await this.tagged(ctx))])];
  }

  /**
   * The target groups the Tagging API lists with this object's ownership (`ours`: its uid, in
   * this cluster) that are not among `wanted` (ARNs): one a create made but no status recorded,
   * whose backend the spec has dropped since (a MyIngressGroup's member that left, an edit), or one
   * an earlier delete could not remove yet. One GetResources (a page per 100). Never one without
   * our tags: another object's or another cluster's are not listed or are filtered out. Read-only.
   */
  async strays(ctx: TagLookupContext, wanted: ReadonlySet<string>): Promise<string[]> {
    return (await this.tagged(ctx)).filter((a) => !wanted.has(a));
  }

  /**
   * The target groups tagged with the object's ownership (uid and cluster both match). One
   * GetResources. Read-only. A safety net beside the lookups by ARN and name, so an identity
   * without `tag:GetResources` (a policy from before it was needed) is not stopped by it: the
   * lookup is skipped (none found) and a warning says what to grant, once per set of AWS clients.
   */
  private async tagged(ctx: TagLookupContext): Promise<string[]> {
    const ours = ctx.ownership;
    if (ours.uid === '') return [];
    let found: TaggedResource[];
    try {
      found = await this.d.taggedResources.find('find target groups by ownership tag', {
        resourceTypes: [targetGroupResourceType],
        tags: { [ownershipTagKeys.uid]: ours.uid },
      });
    } catch (err) {
      if (!isAccessDenied(err)) throw err;
      if (!this.tagLookupDeniedWarned) {
        this.tagLookupDeniedWarned = true;
        ctx.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'tag:GetResources refused: target groups a crash left unrecorded are not looked for; grant tag:GetResources (deploy/iam/policy.json) to the operator’s role',
        );
      }
      return [];
    }
    return found
      .filter((r) => {
        const owner = ownershipFromTags(r.tags);
        return owner?.uid === ours.uid && owner.cluster === ours.cluster;
      })
      .map((r) => r.arn);
  }

  /**
   * The update step for target groups: creates those missing (with their
   * targets, and their attributes when the spec's are not AWS's defaults),
   * modifies health checks and attributes that differ, registers and
   * deregisters targets of those that existed. Returns every target group's
   * ARN by `service:port`, for listeners and rules to point at.
   */
  async sync(u: IngressUpdate, observed: readonly ObservedTargetGroup[]): Promise<Map<string, string>> {
    const tgArns = new Map<string, string>();
    for (const t of observed) {
      let tg = t.tg;
      // What the target group is registered with once this step is done.
      let registered = t.registered;
      // A group this step did not create (observed, or found under its name by the create: the
      // look recalled no such child) is brought to the spec from what AWS says it has.
      let existing = tg !== undefined;
      // Its tags once this step is done (undefined: not known).
      let tags = t.tags;
      // Its attributes once this step is done (undefined: not known).
      let attributes = t.attributes;
      if (tg === undefined) {
        const made = await this.create(u.mr, u.ctx, t.want, u.lb.VpcId ?? '', t.wanted);
        // AWS answers a create with the same name and settings with the existing group (it is
        // idempotent): one recorded in status was there before.
        const recorded = recordedTargetGroups(u.mr).includes(made.tg.TargetGroupArn ?? '');
        if (made.created && !recorded) {
          tg = { ...made.tg, ...healthCheckOf(t.want) };
          registered = t.wanted ?? [];
          tags = tagMap(ownedTagList(u.mr.spec.tags, u.ctx.ownership));
          // Set by the create, before its targets were registered.
          attributes = made.attributes;
          u.done.push(`target group ${t.want.key} created`);
        } else {
          tg = made.tg;
          existing = true;
          registered = (await this.registeredIfExists(tg.TargetGroupArn ?? '')) ?? [];
          attributes = undefined;
        }
      }
      const tgArn = tg.TargetGroupArn ?? '';
      // Not known (a group found under its name): read before they are compared.
      attributes ??= await this.attributes(tgArn);
      const changed = await this.syncAttributes(tgArn, t.want, attributes);
      if (changed.length > 0) {
        attributes = { ...attributes, ...Object.fromEntries(changed.map((c) => [c.Key, c.Value])) };
        u.done.push(`attributes of target group ${t.want.key}: ${changed.map((c) => c.Key).join(', ')}`);
      }
      if (existing && tags !== undefined && targetGroupTagsDiffer(u.mr, u.ctx.ownership, tags)) {
        const synced = await syncUserTags(
          this.d.elbv2,
          'target group',
          tg.TargetGroupArn ?? '',
          u.mr.spec.tags,
          tags,
        );
        tags = tagsAfter(tags, synced);
        u.done.push(`tags of target group ${t.want.key}`);
      }
      if (existing && !healthCheckMatches(tg, t.want)) {
        await this.modifyHealthCheck(tg.TargetGroupArn ?? '', t.want);
        tg = { ...tg, ...healthCheckOf(t.want) };
        u.done.push(`health check ${t.want.key}`);
      }
      tgArns.set(t.want.key, tgArn);
      if (t.wanted !== undefined && existing)
        registered = await this.syncTargets(u, tgArn, t.want.key, registered, t.wanted);
      u.applied.targetGroup(t.want.key, tg, registered, tags, attributes);
    }
    return tgArns;
  }

  /**
   * The update's last step: deletes the target groups recorded in status, and those in `others`
   * (an adopted load balancer's inherited ones, the strays a full look found), that are not among
   * `wanted` (ARNs). One still in use is left for a later update.
   */
  async deleteUnused(
    u: IngressUpdate,
    wanted: ReadonlySet<string>,
    others: readonly string[] = [],
  ): Promise<void> {
    for (const old of new Set([...recordedTargetGroups(u.mr), ...others])) {
      if (!wanted.has(old)) {
        await this.delete(old);
        u.done.push('unused target group deleted');
      }
    }
  }

  /**
   * The target groups attached to load balancer `lbArn` that Skylift made for its previous owner
   * `previous` (their ownership tags name it, in this cluster): the children of a load balancer
   * being adopted, which the adopting object deletes once nothing uses them, as it would its own.
   * Read-only; throws a typed error when AWS cannot be asked.
   */
  async inherited(lbArn: string, previous: OwnershipTags): Promise<string[]> {
    const attached = await this.d.elbv2
      .send(new DescribeTargetGroupsCommand({ LoadBalancerArn: lbArn }))
      .then(
        (o) => o.TargetGroups ?? [],
        (err: unknown) => {
          if (isElbv2NotFound(err)) return [];
          throw toTypedAwsError('describe target groups', err, elbv2ErrorTable);
        },
      );
    const arns = attached.flatMap((t) => (t.TargetGroupArn !== undefined ? [t.TargetGroupArn] : []));
    if (arns.length === 0) return [];
    const tags = await tagsOf(this.d.tagDescriber, arns);
    return arns.filter((a) => {
      const owner = ownershipFromTags(tags.get(a) ?? {});
      return owner?.uid === previous.uid && owner.cluster === previous.cluster;
    });
  }

  /**
   * Deletes a target group; true once it is gone (or was already), false
   * while a listener or rule still uses it. Idempotent.
   */
  async delete(arn: string): Promise<boolean> {
    try {
      await this.d.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn }));
      return true;
    } catch (err) {
      if (isElbv2NotFound(err)) return true;
      if (isResourceInUse(err)) return false;
      throw toTypedAwsError('delete target group', err, elbv2ErrorTable);
    }
  }

  /** Registered targets of a target group, `ip:port`, sorted, draining ones excluded. Read-only. */
  private async registered(tgArn: string): Promise<string[]> {
    const health = await elbv2Call('describe target health', () =>
      this.d.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn })),
    );
    return registeredTargets(health.TargetHealthDescriptions);
  }

  /**
   * Sets, in one ModifyTargetGroupAttributes, the attributes of `want` that differ from `have`
   * (keys it leaves out counting as AWS's defaults); none differing, no call. Returns those set.
   */
  private async syncAttributes(
    tgArn: string,
    want: DesiredTargetGroup,
    have: Readonly<Record<string, string>>,
  ): Promise<{ Key: string; Value: string }[]> {
    const changed = targetGroupAttributeChanges(want.attributes, have);
    if (changed.length > 0)
      await elbv2Call('modify target group attributes', () =>
        this.d.elbv2.send(
          new ModifyTargetGroupAttributesCommand({ TargetGroupArn: tgArn, Attributes: changed }),
        ),
      );
    return changed;
  }

  /** A target group's attributes by key, as DescribeTargetGroupAttributes lists them. Read-only. */
  private async attributes(tgArn: string): Promise<Record<string, string>> {
    const out = await elbv2Call('describe target group attributes', () =>
      this.d.elbv2.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: tgArn })),
    );
    return Object.fromEntries(
      (out.Attributes ?? []).flatMap((a) => (a.Key !== undefined ? [[a.Key, a.Value ?? '']] : [])),
    );
  }

  /** As registered(), or undefined when the target group does not exist (any more). Read-only. */
  async registeredIfExists(tgArn: string): Promise<string[] | undefined> {
    const health = await lookup('describe target health', elbv2ErrorTable, isElbv2NotFound, () =>
      this.d.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn })),
    );
    return health === undefined ? undefined : registeredTargets(health.TargetHealthDescriptions);
  }

  /**
   * The wanted targets, `ip:port`, from the cache; undefined when the Service
   * is unknown, or the caches have not listed yet (an empty slice list then
   * would deregister every target). Pure read of the caches.
   */
  wantedTargets(mr: MyIngress, want: DesiredTargetGroup): string[] | undefined {
    if (!this.d.backendCachesSynced()) return undefined;
    const ns = mr.metadata.namespace ?? '';
    const svc = this.d.service(ns, want.service);
    if (svc === undefined) return undefined;
    const slices = this.d.endpointSlices(ns, want.service);
    const resolved = resolveTargets(svc, slices, want.port, (pod) =>
      registersBeforeReady(this.d.gatedPod(ns, pod)),
    );
    return resolved === undefined ? [] : resolved.ips.map((ip) => `${ip}:${resolved.port}`).sort();
  }

  /**
   * The ports the targets of every backend listen on (where the managed security group's outbound
   * rules lead), from the Services and EndpointSlices in the caches. Undefined until the caches
   * have listed, and while a backend's Service (or its port) is missing: the rules are then left as
   * they are rather than taken from a backend that may be back in a moment. Read-only.
   */
  targetPorts(mr: MyIngress): number[] | undefined {
    if (!this.d.backendCachesSynced()) return undefined;
    const ns = mr.metadata.namespace ?? '';
    const ports = new Set<number>();
    for (const want of desiredTargetGroups(mr.spec, mr.metadata.uid ?? '')) {
      const svc = this.d.service(ns, want.service);
      if (svc === undefined) return undefined;
      const slices = this.d.endpointSlices(ns, want.service);
      const resolved = resolveTargets(svc, slices, want.port);
      if (resolved === undefined) return undefined;
      ports.add(resolved.port);
    }
    return [...ports].sort((a, b) => a - b);
  }

  private byName(name: string): Promise<TargetGroup | undefined> {
    return this.by({ Names: [name] });
  }

  /** The one target group with that name or ARN, or undefined when there is none. */
  private async by(
    query: { Names: string[] } | { TargetGroupArns: string[] },
  ): Promise<TargetGroup | undefined> {
    const out = await lookup('find target group', elbv2ErrorTable, isElbv2NotFound, () =>
      this.d.elbv2.send(new DescribeTargetGroupsCommand(query)),
    );
    return out?.TargetGroups?.[0];
  }

  /**
   * Creates a target group (without SDK retries), sets its attributes where
   * the spec's are not AWS's defaults (before any target is registered, so
   * the first targets already drain and start as the spec says) and registers
   * its wanted targets; when the name is taken by this object's own group,
   * takes that one as it is (`created` false: its targets, health check and
   * attributes are unknown; likewise a group recorded in status that AWS
   * answered the create with). Its port is the wanted targets' port (or the
   * Service port). `attributes`: what a group this call created has.
   */
  private async create(
    mr: MyIngress,
    ctx: IngressContext,
    want: DesiredTargetGroup,
    vpcId: string,
    wanted: readonly string[] | undefined,
  ): Promise<{
    readonly tg: TargetGroup;
    readonly created: boolean;
    readonly attributes: Readonly<Record<string, string>>;
  }> {
    const port = Number(wanted?.[0]?.split(':').pop() ?? want.port) || want.port;
    // Set by the create callback: createOrFind answers a found group the same way.
    const outcome = { created: false };
    const tg = await createOrFind({
      what: `create target group ${want.name}`,
      table: elbv2ErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DuplicateTargetGroupName'),
      ownership: ctx.ownership,
      find: async () => {
        const found = await this.byName(want.name);
        return withTags(this.d.tagDescriber, found, found?.TargetGroupArn);
      },
      create: async () => {
        const out = await this.d.elbv2Create.send(
          new CreateTargetGroupCommand({
            Name: want.name,
            Protocol: 'HTTP',
            Port: port,
            VpcId: vpcId,
            TargetType: 'ip',
            ...(want.protocolVersion === 'GRPC' ? { ProtocolVersion: 'GRPC' } : {}),
            ...healthCheckInput(want),
            Tags: [...ownedTagList(mr.spec.tags, ctx.ownership), ...childTagList(ctx, want.key)],
          }),
        );
        outcome.created = true;
        return out.TargetGroups?.[0];
      },
    });
    if (tg?.TargetGroupArn === undefined)
      throw new RetryableError(AwsReason.AwsError, `create target group ${want.name}: no ARN returned`);
    const tgArn = tg.TargetGroupArn;
    const created = outcome.created;
    const fresh = created && !recordedTargetGroups(mr).includes(tgArn);
    // A new group has AWS's defaults: only settings that differ cost a call.
    let attributes: Readonly<Record<string, string>> = targetGroupAttributeDefaults;
    if (fresh) {
      const set = await this.syncAttributes(tgArn, want, attributes);
      attributes = { ...attributes, ...Object.fromEntries(set.map((c) => [c.Key, c.Value])) };
    }
    if (fresh && wanted !== undefined && wanted.length > 0) {
      await elbv2Call('register targets', () =>
        this.d.elbv2.send(new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets: wanted.map(target) })),
      );
    }
    return { tg, created, attributes };
  }

  private async modifyHealthCheck(tgArn: string, want: DesiredTargetGroup): Promise<void> {
    await elbv2Call('modify target group', () =>
      this.d.elbv2.send(
        new ModifyTargetGroupCommand({
          TargetGroupArn: tgArn,
          ...healthCheckInput(want),
        }),
      ),
    );
  }

  /**
   * Registers the wanted targets that are not registered, then deregisters those not wanted (a
   * child set, runtime/childSet.ts: every target of Skylift's target group is Skylift's; each
   * target once). No per-call limit: the ELBv2 API reference states none for Register/DeregisterTargets.
   * Returns the targets registered once AWS accepted each call (runtime/childSetState.ts): the
   * wanted ones.
   */
  private async syncTargets(
    u: IngressUpdate,
    tgArn: string,
    key: string,
    registered: readonly string[],
    wanted: readonly string[],
  ): Promise<string[]> {
    const plan = planOf(
      planChildSet(
        wanted.map((t) => [t, t] as const),
        registered.map((t) => [t, { value: t, ours: true }] as const),
      ),
    );
    const targets = new ChildSetState(registered.map((t) => [t, t] as const));
    for (const b of plan.batches)
      await targets.applyWhenAccepted(b, async () => {
        const Targets = b.children.map((c) => target(c.value));
        if (b.op === 'create')
          await elbv2Call('register targets', () =>
            this.d.elbv2.send(new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets })),
          );
        else
          await elbv2Call('deregister targets', () =>
            this.d.elbv2.send(new DeregisterTargetsCommand({ TargetGroupArn: tgArn, Targets })),
          );
      });
    const { creates, deletes } = plan;
    if (creates.length + deletes.length > 0)
      u.done.push(`targets of ${key} +${creates.length}/-${deletes.length}`);
    return targets.values();
  }
}

/** The registered targets in a DescribeTargetHealth answer, `ip:port`, sorted, draining ones excluded. Pure. */
function registeredTargets(health: readonly TargetHealthDescription[] | undefined): string[] {
  return (health ?? [])
    .filter((h) => h.TargetHealth?.State !== 'draining')
    .map((h) => `${h.Target?.Id ?? ''}:${h.Target?.Port ?? ''}`)
    .sort();
}

/** The target group ARNs recorded in the object's status. Pure. */
function recordedTargetGroups(mr: MyIngress): string[] {
  const tgs = mr.status?.targetGroups;
  if (!Array.isArray(tgs)) return [];
  return tgs
    .map((t: unknown) => (t as { arn?: unknown }).arn)
    .filter((a): a is string => typeof a === 'string');
}

/** An `ip:port` target as the SDK takes it. Pure. */
function target(s: string): { Id: string; Port: number } {
  const i = s.lastIndexOf(':');
  return { Id: s.slice(0, i), Port: Number(s.slice(i + 1)) };
}

/** The health check fields of CreateTargetGroup and ModifyTargetGroup for a wanted target group. Pure. */
function healthCheckInput(want: DesiredTargetGroup) {
  const h = want.healthCheck;
  return {
    HealthCheckPath: h.path,
    HealthCheckIntervalSeconds: h.intervalSeconds,
    HealthCheckTimeoutSeconds: h.timeoutSeconds,
    HealthyThresholdCount: h.healthyThresholdCount,
    UnhealthyThresholdCount: h.unhealthyThresholdCount,
    Matcher: want.protocolVersion === 'GRPC' ? { GrpcCode: h.matcher } : { HttpCode: h.matcher },
  };
}

/** A target group's health check fields as set for `want` (what is remembered of it). Pure. */
function healthCheckOf(want: DesiredTargetGroup): Partial<TargetGroup> {
  return healthCheckInput(want);
}

/** What a lookup by tag needs of the reconcile: the object's ownership, and where to warn. */
export type TagLookupContext = Pick<ReconcileContext, 'ownership' | 'logger'>;

/** Whether AWS refused the call for want of a permission (typed by awsCall, or raw). Pure. */
function isAccessDenied(err: unknown): boolean {
  const denied = ['AccessDenied', 'AccessDeniedException'];
  if (err instanceof AwsTerminalError) return err.code !== undefined && denied.includes(err.code);
  return hasErrorCode(err, 'AccessDenied');
}
