// What differs between a load balancer (with its children) and its MyIngress's spec.
import type { Listener, LoadBalancer, Rule, TargetGroup } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags, type OwnershipTags } from '../../apis/managed.ts';
import type { DeltaEntry } from '../../runtime/adapter.ts';
import type { MyIngress } from './api.ts';
import { hasUserTagChanges, userTagChanges } from '../../providers/aws/tags.ts';
import {
  listenerMatches,
  ruleMatches,
  sdkActions,
  sdkConditions,
  targetGroupAttributeChanges,
  type DesiredTargetGroup,
} from './desired.ts';
import { wafAclTag, webAclDelta, webAclPlan, type WebAclSeen } from './webAclPlan.ts';
import { securityGroupDelta, type ManagedGroupLook } from './securityGroupPlan.ts';

/** What can differ between a load balancer (with its children) and its MyIngress. */
export type MyIngressField =
  | 'ownership'
  | 'targetGroups'
  | 'targets'
  | 'healthChecks'
  | 'targetGroupAttributes'
  | 'listeners'
  | 'rules'
  | 'attributes'
  | 'securityGroups'
  | 'managedSecurityGroup'
  | 'subnets'
  | 'ipAddressType'
  | 'tags'
  | 'webAcl';

/** A desired target group as observed. */
export interface ObservedTargetGroup {
  readonly want: DesiredTargetGroup;
  readonly tg: TargetGroup | undefined;
  /** Registered targets, `ip:port`. */
  readonly registered: readonly string[];
  /** Wanted targets, `ip:port` (undefined when the Service is unknown: leave targets alone). */
  readonly wanted: readonly string[] | undefined;
  /** Its tags (undefined when not known: a group a create found under its name, until a full look). */
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /**
   * Its attributes as DescribeTargetGroupAttributes lists them (read at full looks; undefined when
   * not known: then not compared, and the update reads them before it brings them to the spec).
   */
  readonly attributes?: Readonly<Record<string, string>> | undefined;
}

/** A live load balancer and its children, as observed. */
export interface ObservedLoadBalancer {
  readonly ownership: OwnershipTags | undefined;
  readonly lb: LoadBalancer;
  readonly listeners: readonly Listener[];
  readonly rules: ReadonlyMap<string, readonly Rule[]>;
  readonly targetGroups: readonly ObservedTargetGroup[];
  readonly attributes: ReadonlyMap<string, string>;
  /** The load balancer's tags. */
  readonly tags: Readonly<Record<string, string>>;
  /** The web ACL attached, when read (see webAclNeeded); undefined when not. */
  readonly webAcl?: WebAclSeen | undefined;
  /** The managed security group, when read (see managedGroupLookNeeded); undefined when not. */
  readonly securityGroup?: ManagedGroupLook | undefined;
  /** The ports the targets listen on (the managed group's outbound rules); undefined: not known. */
  readonly egressPorts?: readonly number[] | undefined;
  /**
   * Target groups carrying this object's ownership tags that the spec does not want (ARNs), found
   * by tag at a full look (TargetGroups.strays); undefined when not looked for (recalled children).
   */
  readonly strayTargetGroups?: readonly string[] | undefined;
}

/**
 * Every field where AWS differs from the spec (ownership against `ours`). `known`: each target
 * group's targets as Skylift last knew them registered (by backend key), when remembered; targets
 * that differ only because the wanted set moved (AWS still holds what Skylift left) are marked
 * `follows`, not drift. `held`: the ports of listeners held back (heldListeners), not compared. Pure.
 */
export function ingressDelta(
  mr: MyIngress,
  ours: OwnershipTags,
  o: ObservedLoadBalancer,
  known?: ReadonlyMap<
    string,
    { readonly tg?: TargetGroup | undefined; readonly registered: readonly string[] }
  >,
  held: ReadonlySet<number> = new Set(),
): DeltaEntry<MyIngressField>[] {
  const delta: DeltaEntry<MyIngressField>[] = [];
  const tgArns = new Map(
    o.targetGroups
      .filter((t) => t.tg?.TargetGroupArn !== undefined)
      .map((t) => [t.want.key, t.tg?.TargetGroupArn ?? '']),
  );
  if (o.ownership?.uid !== ours.uid) delta.push({ field: 'ownership', change: 'ownership tags missing' });
  for (const t of o.targetGroups) {
    if (t.tg === undefined)
      delta.push({ field: 'targetGroups', change: `target group for ${t.want.key} missing` });
    else if (t.wanted !== undefined && !sameSet(t.registered, t.wanted)) {
      const k = known?.get(t.want.key);
      // Only what Skylift left in this very group: one recreated by hand is not followed.
      const sameGroup = k?.tg === undefined || k.tg.TargetGroupArn === t.tg.TargetGroupArn;
      const was = sameGroup ? k?.registered : undefined;
      delta.push({
        field: 'targets',
        change: `targets of ${t.want.key}: ${t.registered.length} → ${t.wanted.length}`,
        ...(was !== undefined && sameSet(was, t.registered) ? { follows: true as const } : {}),
      });
    } else if (!healthCheckMatches(t.tg, t.want))
      delta.push({ field: 'healthChecks', change: `health check of ${t.want.key}` });
    if (t.tg !== undefined && t.attributes !== undefined) {
      const changed = targetGroupAttributeChanges(t.want.attributes, t.attributes);
      if (changed.length > 0)
        delta.push({
          field: 'targetGroupAttributes',
          change: `attributes of target group ${t.want.key}: ${changed.map((c) => c.Key).join(', ')}`,
        });
    }
    if (t.tg !== undefined && targetGroupTagsDiffer(mr, ours, t.tags))
      delta.push({ field: 'tags', change: `tags of target group ${t.want.key}` });
  }
  // Our own leftovers (a create never recorded, a delete refused while in use): deleted by the
  // update's last step — housekeeping, not a difference from the spec, and not drift.
  for (const arn of o.strayTargetGroups ?? [])
    delta.push({
      field: 'targetGroups',
      change: `target group ${targetGroupNameOf(arn)} not wanted`,
      operation: true,
    });
  const allTgs = o.targetGroups.every((t) => t.tg !== undefined);
  for (const want of mr.spec.listeners ?? []) {
    // A listener held back for a certificate not found is left as AWS has it (certificateHosts.ts).
    if (held.has(want.port)) continue;
    const l = o.listeners.find((x) => x.Port === want.port);
    if (l === undefined) {
      delta.push({ field: 'listeners', change: `listener ${want.port} missing` });
      continue;
    }
    if (
      allTgs &&
      !listenerMatches(l, {
        protocol: want.protocol,
        certificateArn: want.certificateArn,
        additionalCertificateArns: want.additionalCertificateArns ?? [],
        sslPolicy: want.sslPolicy,
        actions: sdkActions(want.defaultAction, tgArns),
      })
    ) {
      delta.push({ field: 'listeners', change: `listener ${want.port} changed` });
    }
  }
  for (const l of o.listeners)
    if (!(mr.spec.listeners ?? []).some((w) => w.port === l.Port))
      delta.push({ field: 'listeners', change: `listener ${l.Port ?? '?'} not wanted` });
  const firstPort = (mr.spec.listeners ?? [])[0]?.port;
  for (const l of o.listeners) {
    const have = o.rules.get(l.ListenerArn ?? '') ?? [];
    const want = (mr.spec.rules ?? []).filter((r) => (r.listenerPort ?? firstPort) === l.Port);
    for (const w of want) {
      const r = have.find((x) => Number(x.Priority) === w.priority);
      if (r === undefined) delta.push({ field: 'rules', change: `rule ${w.priority} missing` });
      else if (
        allTgs &&
        !ruleMatches(r, {
          conditions: sdkConditions(w.hosts, w.paths, w),
          actions: sdkActions(w.action, tgArns),
        })
      )
        delta.push({ field: 'rules', change: `rule ${w.priority} changed` });
    }
    for (const r of have)
      if (!want.some((w) => w.priority === Number(r.Priority)))
        delta.push({ field: 'rules', change: `rule ${r.Priority ?? '?'} not wanted` });
  }
  const attrs = wantedAttributes(mr);
  for (const [k, v] of attrs)
    if ((o.attributes.get(k) ?? defaultAttribute(k)) !== v)
      delta.push({ field: 'attributes', change: `attribute ${k}` });
  const subnets = mr.spec.subnets;
  if (subnets !== undefined && !sameSet(subnetsOf(o.lb), subnets))
    delta.push({ field: 'subnets', change: 'subnets' });
  delta.push(...securityGroupDelta(mr.spec, o.lb, o.securityGroup, o.egressPorts, ours));
  if ((mr.spec.ipAddressType ?? 'ipv4') !== (o.lb.IpAddressType ?? 'ipv4'))
    delta.push({ field: 'ipAddressType', change: 'ip address type' });
  if (hasUserTagChanges(userTagChanges(mr.spec.tags, o.tags))) delta.push({ field: 'tags', change: 'tags' });
  const recorded = o.tags[wafAclTag];
  delta.push(...webAclDelta(webAclPlan(mr.spec, recorded, o.webAcl), o.webAcl, recorded));
  return delta;
}

/**
 * Whether a target group's user tags (when known, and the group is this object's) differ from the
 * spec's: Skylift brings them to the spec as it does the load balancer's. Pure.
 */
export function targetGroupTagsDiffer(
  mr: MyIngress,
  ours: OwnershipTags,
  tags: Readonly<Record<string, string>> | undefined,
): boolean {
  return (
    tags !== undefined &&
    ownershipFromTags(tags)?.uid === ours.uid &&
    hasUserTagChanges(userTagChanges(mr.spec.tags, tags))
  );
}

/** The subnets a load balancer is in. Pure. */
export function subnetsOf(lb: LoadBalancer): string[] {
  return (lb.AvailabilityZones ?? []).map((z) => z.SubnetId ?? '').filter((s) => s !== '');
}

/** The load balancer attributes the spec asks for. Pure. */
export function wantedAttributes(mr: MyIngress): Map<string, string> {
  const a = mr.spec.attributes ?? {};
  return new Map([
    ['idle_timeout.timeout_seconds', String(a.idleTimeoutSeconds ?? 60)],
    ['deletion_protection.enabled', String(a.deletionProtection ?? false)],
    ['routing.http2.enabled', String(a.http2 ?? true)],
    ['access_logs.s3.enabled', String(a.accessLogs !== undefined)],
    ...(a.accessLogs !== undefined
      ? ([
          ['access_logs.s3.bucket', a.accessLogs.bucket],
          ['access_logs.s3.prefix', a.accessLogs.prefix ?? ''],
        ] as const)
      : []),
  ]);
}

/** What AWS reports for an attribute it does not list (its documented default). */
export function defaultAttribute(key: string): string | undefined {
  const defaults: Record<string, string> = {
    'idle_timeout.timeout_seconds': '60',
    'deletion_protection.enabled': 'false',
    'routing.http2.enabled': 'true',
    'access_logs.s3.enabled': 'false',
    'access_logs.s3.prefix': '',
  };
  return defaults[key];
}

/** Whether a target group's health check is the wanted one. Pure. */
export function healthCheckMatches(tg: TargetGroup, want: DesiredTargetGroup): boolean {
  const h = want.healthCheck;
  return (
    (tg.HealthCheckPath ?? '/') === h.path &&
    (tg.HealthCheckIntervalSeconds ?? 30) === h.intervalSeconds &&
    (tg.HealthCheckTimeoutSeconds ?? 5) === h.timeoutSeconds &&
    (tg.HealthyThresholdCount ?? 5) === h.healthyThresholdCount &&
    (tg.UnhealthyThresholdCount ?? 2) === h.unhealthyThresholdCount &&
    (want.protocolVersion === 'GRPC' ? tg.Matcher?.GrpcCode : (tg.Matcher?.HttpCode ?? '200')) === h.matcher
  );
}

/** Same members, any order. Pure. */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

/** A target group's name from its ARN (`…:targetgroup/<name>/<id>`), or the ARN. Pure. */
export function targetGroupNameOf(arn: string): string {
  return /:targetgroup\/([^/]+)\//.exec(arn)?.[1] ?? arn;
}
