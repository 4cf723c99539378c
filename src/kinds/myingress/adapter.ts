import { DescribeSubnetsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import {
  AddTagsCommand,
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeleteListenerCommand,
  DeleteLoadBalancerCommand,
  DeleteRuleCommand,
  DeleteTargetGroupCommand,
  DeregisterTargetsCommand,
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ModifyListenerCommand,
  ModifyLoadBalancerAttributesCommand,
  ModifyRuleCommand,
  ModifyTargetGroupCommand,
  RegisterTargetsCommand,
  SetIpAddressTypeCommand,
  SetSecurityGroupsCommand,
  SetSubnetsCommand,
  type ElasticLoadBalancingV2Client,
  type Listener,
  type LoadBalancer,
  type Rule,
  type TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { MyIngress } from './api.ts';
import { awsCall, createOrFind, lookup } from '../../providers/aws/calls.ts';
import { hasErrorCode, toTypedAwsError } from '../../providers/aws/errors.ts';
import { ownedTagList, tagList } from '../../providers/aws/tags.ts';
import type { LoadBalancerDescriber, TagDescriber } from '../../providers/elbv2/describeBatcher.ts';
import { elbv2ErrorTable, isElbv2NotFound, isResourceInUse } from '../../providers/elbv2/errors.ts';
import { hasDelta, type Created, type Updated } from '../../runtime/adapter.ts';
import type { ExistingObservation, ExternalClient, Observation } from '../../runtime/adapter.ts';
import type { ReadyState, ReconcileContext } from '../../runtime/adapter.ts';
import { Reason } from '../../runtime/conditions.ts';
import { RetryableError, TerminalError } from '../../runtime/errors.ts';
import type { KubeObject } from '../../apis/meta.ts';
import { ownershipFromTags } from '../../apis/managed.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import {
  desiredTargetGroups,
  listenerMatches,
  resolveTargets,
  ruleMatches,
  sdkActions,
  sdkConditions,
  type DesiredTargetGroup,
  type EndpointSliceLike,
  type ServiceLike,
} from './desired.ts';
import {
  defaultAttribute,
  healthCheckMatches,
  ingressDelta,
  sameSet,
  wantedAttributes,
  type MyIngressField,
  type ObservedTargetGroup,
} from './delta.ts';
import { loadBalancerName } from './names.ts';

export type { MyIngressField } from './delta.ts';

/** Ready reasons particular to MyIngress. */
export const IngressReason = {
  Provisioning: 'Provisioning',
  Failed: 'Failed',
  Available: Reason.Available,
} as const;

/** What the MyIngress adapter needs. */
export interface MyIngressAdapterDeps {
  readonly elbv2: ElasticLoadBalancingV2Client;
  /** The same service without SDK retries, for creates (see AwsClients.elbv2Create). */
  readonly elbv2Create: ElasticLoadBalancingV2Client;
  readonly ec2: EC2Client;
  readonly describer: LoadBalancerDescriber;
  readonly tagDescriber: TagDescriber;
  /** Cached Service by namespace and name. */
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  /** Cached EndpointSlices of a Service. */
  readonly endpointSlices: (namespace: string, service: string) => KubeObject[];
  /** First interval between looks at a load balancer that is not Ready yet (longer waits are polled less often). */
  readonly pollMs: number;
}

/** What observe found, handed back to update and delete. */
export type MyIngressDetails =
  /** A live load balancer; its children are described only when the object is not being deleted. */
  | {
      readonly found: 'loadBalancer';
      readonly lb: LoadBalancer;
      readonly listeners: Listener[];
      readonly rules: Map<string, Rule[]>;
      readonly targetGroups: ObservedTargetGroup[];
      readonly attributes: Map<string, string>;
    }
  /** Only target groups are left of a deleted object. */
  | { readonly found: 'leftovers'; readonly leftoverTargetGroups: string[] };

type IngressObservation = ExistingObservation<MyIngressDetails, MyIngressField>;

const call = <T>(what: string, fn: () => Promise<T>): Promise<T> => awsCall(what, elbv2ErrorTable, fn);

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

  constructor(deps: MyIngressAdapterDeps) {
    this.d = deps;
  }

  async observe(
    mr: MyIngress,
    ctx: ReconcileContext,
  ): Promise<Observation<MyIngressDetails, MyIngressField>> {
    const lb = await this.findLoadBalancer(mr);
    if (lb?.LoadBalancerArn === undefined) {
      // A deletion cut short after the load balancer went (a kill, a throttled DeleteTargetGroup)
      // still owns target groups, which AWS keeps: report them, so delete() runs again.
      if (mr.metadata.deletionTimestamp === undefined) return { exists: false };
      const leftovers = await this.ownedTargetGroups(mr);
      if (leftovers.length === 0) return { exists: false };
      return {
        exists: true,
        ownership: ctx.ownership,
        delta: [],
        ready: {
          ready: false,
          reason: Reason.Deleting,
          message: `deleting ${leftovers.length} target group(s) left after the load balancer`,
        },
        status: {},
        details: { found: 'leftovers', leftoverTargetGroups: leftovers },
      };
    }
    const arn = lb.LoadBalancerArn;
    const tags = await this.tagsOf([arn]);
    const ownership = ownershipFromTags(tags.get(arn) ?? {});
    const state = lb.State?.Code ?? 'provisioning';
    const base: Record<string, unknown> = {
      arn,
      dnsName: lb.DNSName,
      canonicalHostedZoneId: lb.CanonicalHostedZoneId,
      state,
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

    const listeners =
      (
        await call('describe listeners', () =>
          this.d.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: arn })),
        )
      ).Listeners ?? [];
    const rules = new Map<string, Rule[]>();
    for (const l of listeners) {
      if (l.ListenerArn === undefined) continue;
      const out = await call('describe rules', () =>
        this.d.elbv2.send(new DescribeRulesCommand({ ListenerArn: l.ListenerArn })),
      );
      rules.set(
        l.ListenerArn,
        (out.Rules ?? []).filter((r) => r.IsDefault !== true),
      );
    }
    const attributes = new Map(
      (
        (
          await call('describe attributes', () =>
            this.d.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn })),
          )
        ).Attributes ?? []
      ).map((a) => [a.Key ?? '', a.Value ?? '']),
    );
    const targetGroups = await this.observeTargetGroups(mr, ctx, arn);
    const delta = ingressDelta(mr, ctx.ownership, {
      ownership,
      lb,
      listeners,
      rules,
      targetGroups,
      attributes,
      tags: tags.get(arn) ?? {},
    });

    const ready: ReadyState =
      state === 'active' && mr.spec.listeners.every((w) => listeners.some((l) => l.Port === w.port))
        ? { ready: true, reason: IngressReason.Available }
        : state === 'failed'
          ? {
              ready: false,
              reason: IngressReason.Failed,
              message: lb.State?.Reason ?? 'the load balancer failed',
            }
          : {
              ready: false,
              reason: IngressReason.Provisioning,
              message:
                state === 'active'
                  ? `load balancer is active; creating listeners on ${mr.spec.listeners
                      .filter((w) => !listeners.some((l) => l.Port === w.port))
                      .map((w) => `${w.protocol}:${w.port}`)
                      .join(', ')}`
                  : `load balancer is ${state}`,
            };
    const status = {
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
    return {
      exists: true,
      ownership,
      delta,
      ready,
      status,
      details: { found: 'loadBalancer', lb, listeners, rules, targetGroups, attributes },
      ...(ready.ready
        ? {}
        : { requeueAfterMs: busyPollInterval(mr, this.d.pollMs, ctx.clock.now(), 60_000) }),
    };
  }

  async create(mr: MyIngress, ctx: ReconcileContext): Promise<Created> {
    const subnets = await this.subnets(mr);
    const name = loadBalancerName(mr.metadata.namespace ?? '', mr.metadata.name, ctx.ownership.uid);
    const lb = await createOrFind({
      what: `create load balancer ${name}`,
      table: elbv2ErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DuplicateLoadBalancerName'),
      ownership: ctx.ownership,
      find: async () => {
        const found = (await this.d.elbv2.send(new DescribeLoadBalancersCommand({ Names: [name] })))
          .LoadBalancers?.[0];
        return this.withTags(found, found?.LoadBalancerArn);
      },
      create: async () =>
        (
          await this.d.elbv2Create.send(
            new CreateLoadBalancerCommand({
              Name: name,
              Type: 'application',
              Scheme: mr.spec.scheme ?? 'internet-facing',
              IpAddressType: mr.spec.ipAddressType ?? 'ipv4',
              Subnets: subnets,
              ...(mr.spec.securityGroups !== undefined ? { SecurityGroups: mr.spec.securityGroups } : {}),
              Tags: ownedTagList(mr.spec.tags, ctx.ownership),
            }),
          )
        ).LoadBalancers?.[0],
    });
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
    const arn = d.lb.LoadBalancerArn ?? '';
    const done: string[] = [];
    const elb = this.d.elbv2;
    if (observed.ownership?.uid !== ctx.ownership.uid) {
      await call('tag load balancer', () =>
        elb.send(
          new AddTagsCommand({ ResourceArns: [arn], Tags: ownedTagList(mr.spec.tags, ctx.ownership) }),
        ),
      );
      done.push('tagged');
    }
    const userTags = tagList(mr.spec.tags ?? {});
    if (
      userTags.length > 0 &&
      observed.ownership?.uid === ctx.ownership.uid &&
      hasDelta(observed.delta, 'tags')
    ) {
      await call('tag load balancer', () =>
        elb.send(new AddTagsCommand({ ResourceArns: [arn], Tags: userTags })),
      );
      done.push('tags');
    }
    const ipType = mr.spec.ipAddressType ?? 'ipv4';
    if (ipType !== (d.lb.IpAddressType ?? 'ipv4')) {
      await call('set ip address type', () =>
        elb.send(new SetIpAddressTypeCommand({ LoadBalancerArn: arn, IpAddressType: ipType })),
      );
      done.push(`ip address type ${ipType}`);
    }
    const sg = mr.spec.securityGroups;
    if (sg !== undefined && !sameSet(d.lb.SecurityGroups ?? [], sg)) {
      await call('set security groups', () =>
        elb.send(new SetSecurityGroupsCommand({ LoadBalancerArn: arn, SecurityGroups: sg })),
      );
      done.push('security groups');
    }
    if (
      mr.spec.subnets !== undefined &&
      !sameSet(
        (d.lb.AvailabilityZones ?? []).map((z) => z.SubnetId ?? ''),
        mr.spec.subnets,
      )
    ) {
      const subnets = mr.spec.subnets;
      await call('set subnets', () =>
        elb.send(new SetSubnetsCommand({ LoadBalancerArn: arn, Subnets: subnets })),
      );
      done.push('subnets');
    }
    const attrs = [...wantedAttributes(mr)].filter(
      ([k, v]) => (d.attributes.get(k) ?? defaultAttribute(k)) !== v,
    );
    if (attrs.length > 0) {
      await call('modify attributes', () =>
        elb.send(
          new ModifyLoadBalancerAttributesCommand({
            LoadBalancerArn: arn,
            Attributes: attrs.map(([Key, Value]) => ({ Key, Value })),
          }),
        ),
      );
      done.push(`attributes ${attrs.map(([k]) => k).join(', ')}`);
    }

    // Target groups first: listeners and rules point at them.
    const tgArns = new Map<string, string>();
    for (const t of d.targetGroups) {
      let tg = t.tg;
      if (tg === undefined) {
        tg = await this.createTargetGroup(mr, ctx, t.want, d.lb.VpcId ?? '', t.wanted);
        done.push(`target group ${t.want.key} created`);
      } else if (!healthCheckMatches(tg, t.want)) {
        const h = t.want.healthCheck;
        const tgArn = tg.TargetGroupArn ?? '';
        await call('modify target group', () =>
          elb.send(
            new ModifyTargetGroupCommand({
              TargetGroupArn: tgArn,
              HealthCheckPath: h.path,
              HealthCheckIntervalSeconds: h.intervalSeconds,
              HealthCheckTimeoutSeconds: h.timeoutSeconds,
              HealthyThresholdCount: h.healthyThresholdCount,
              UnhealthyThresholdCount: h.unhealthyThresholdCount,
              Matcher: { HttpCode: h.matcher },
            }),
          ),
        );
        done.push(`health check ${t.want.key}`);
      }
      const tgArn = tg.TargetGroupArn ?? '';
      tgArns.set(t.want.key, tgArn);
      if (t.wanted !== undefined && t.tg !== undefined) {
        const add = t.wanted.filter((x) => !t.registered.includes(x));
        const remove = t.registered.filter((x) => !(t.wanted ?? []).includes(x));
        if (add.length > 0)
          await call('register targets', () =>
            elb.send(new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets: add.map(target) })),
          );
        if (remove.length > 0)
          await call('deregister targets', () =>
            elb.send(new DeregisterTargetsCommand({ TargetGroupArn: tgArn, Targets: remove.map(target) })),
          );
        if (add.length + remove.length > 0)
          done.push(`targets of ${t.want.key} +${add.length}/-${remove.length}`);
      }
    }

    const listenerArns = new Map<number, string>();
    for (const want of mr.spec.listeners) {
      const actions = sdkActions(want.defaultAction, tgArns);
      const l = d.listeners.find((x) => x.Port === want.port);
      const certs = want.certificateArn !== undefined ? [{ CertificateArn: want.certificateArn }] : undefined;
      if (l?.ListenerArn === undefined) {
        // Without SDK retries (as every create): a listener whose answer was lost is found by the
        // next observe instead of being created twice.
        const out = await call(`create listener ${want.port}`, () =>
          this.d.elbv2Create.send(
            new CreateListenerCommand({
              LoadBalancerArn: arn,
              Port: want.port,
              Protocol: want.protocol,
              DefaultActions: actions,
              ...(certs !== undefined ? { Certificates: certs } : {}),
              ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
              Tags: ownedTagList(mr.spec.tags, ctx.ownership),
            }),
          ),
        );
        listenerArns.set(want.port, out.Listeners?.[0]?.ListenerArn ?? '');
        done.push(`listener ${want.port} created`);
      } else {
        listenerArns.set(want.port, l.ListenerArn);
        if (
          !listenerMatches(l, {
            protocol: want.protocol,
            certificateArn: want.certificateArn,
            sslPolicy: want.sslPolicy,
            actions,
          })
        ) {
          const larn = l.ListenerArn;
          await call(`modify listener ${want.port}`, () =>
            elb.send(
              new ModifyListenerCommand({
                ListenerArn: larn,
                Protocol: want.protocol,
                DefaultActions: actions,
                ...(certs !== undefined ? { Certificates: certs } : {}),
                ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
              }),
            ),
          );
          done.push(`listener ${want.port} modified`);
        }
      }
    }

    const firstPort = mr.spec.listeners[0]?.port;
    for (const [port, larn] of listenerArns) {
      const have = d.rules.get(larn) ?? [];
      const wantRules = (mr.spec.rules ?? []).filter((r) => (r.listenerPort ?? firstPort) === port);
      for (const r of have) {
        if (!wantRules.some((w) => w.priority === Number(r.Priority)) && r.RuleArn !== undefined) {
          const rarn = r.RuleArn;
          await call(`delete rule ${r.Priority ?? ''}`, () =>
            elb.send(new DeleteRuleCommand({ RuleArn: rarn })),
          );
          done.push(`rule ${r.Priority ?? ''} deleted`);
        }
      }
      for (const w of wantRules) {
        const conditions = sdkConditions(w.hosts, w.paths);
        const actions = sdkActions(w.action, tgArns);
        const r = have.find((x) => Number(x.Priority) === w.priority);
        if (r?.RuleArn === undefined) {
          await call(`create rule ${w.priority}`, () =>
            this.d.elbv2Create.send(
              new CreateRuleCommand({
                ListenerArn: larn,
                Priority: w.priority,
                Conditions: conditions,
                Actions: actions,
                Tags: ownedTagList(mr.spec.tags, ctx.ownership),
              }),
            ),
          );
          done.push(`rule ${w.priority} created`);
        } else if (!ruleMatches(r, { conditions, actions })) {
          const rarn = r.RuleArn;
          await call(`modify rule ${w.priority}`, () =>
            elb.send(new ModifyRuleCommand({ RuleArn: rarn, Conditions: conditions, Actions: actions })),
          );
          done.push(`rule ${w.priority} modified`);
        }
      }
    }
    for (const l of d.listeners) {
      if (!mr.spec.listeners.some((w) => w.port === l.Port) && l.ListenerArn !== undefined) {
        const larn = l.ListenerArn;
        await call(`delete listener ${l.Port ?? ''}`, () =>
          elb.send(new DeleteListenerCommand({ ListenerArn: larn })),
        );
        done.push(`listener ${l.Port ?? ''} deleted`);
      }
    }
    // Target groups no longer referenced (recorded in status) go last.
    const wantedArns = new Set(tgArns.values());
    for (const old of recordedTargetGroups(mr)) {
      if (!wantedArns.has(old)) {
        await this.deleteTargetGroup(old);
        done.push('unused target group deleted');
      }
    }
    return { description: done.length > 0 ? done.join('; ') : 'nothing to change' };
  }

  async delete(mr: MyIngress, observed: IngressObservation): Promise<{ gone: boolean }> {
    const d = observed.details;
    const arn = d.found === 'loadBalancer' ? (d.lb.LoadBalancerArn ?? '') : '';
    const elb = this.d.elbv2;
    const leftovers = d.found === 'leftovers' ? d.leftoverTargetGroups : undefined;
    // Observe has just described the load balancer; no need to ask AWS again.
    const lb = d.found === 'loadBalancer' ? d.lb : undefined;
    if (lb !== undefined) {
      const attrs =
        (
          await call('describe attributes', () =>
            elb.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn })),
          )
        ).Attributes ?? [];
      if (attrs.some((a) => a.Key === 'deletion_protection.enabled' && a.Value === 'true')) {
        throw new TerminalError(
          'deletion protection is on for this load balancer: set spec.attributes.deletionProtection to false (or turn it off in AWS) and Skylift will finish deleting it',
        );
      }
      const listeners =
        (
          await call('describe listeners', () =>
            elb.send(new DescribeListenersCommand({ LoadBalancerArn: arn })),
          )
        ).Listeners ?? [];
      for (const l of listeners) {
        if (l.ListenerArn === undefined) continue;
        const larn = l.ListenerArn;
        const rules =
          (await call('describe rules', () => elb.send(new DescribeRulesCommand({ ListenerArn: larn }))))
            .Rules ?? [];
        for (const r of rules) {
          if (r.IsDefault === true || r.RuleArn === undefined) continue;
          const rarn = r.RuleArn;
          await ignoreNotFound(() => elb.send(new DeleteRuleCommand({ RuleArn: rarn })), 'delete rule');
        }
        await ignoreNotFound(
          () => elb.send(new DeleteListenerCommand({ ListenerArn: larn })),
          'delete listener',
        );
      }
      await ignoreNotFound(
        () => elb.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn })),
        'delete load balancer',
      );
      if ((await this.d.describer.describe(arn)) !== undefined) return { gone: false };
    }
    // AWS keeps target groups after their load balancer is gone: delete ours explicitly.
    for (const tgArn of leftovers ?? (await this.ownedTargetGroups(mr))) {
      const deleted = await this.deleteTargetGroup(tgArn);
      if (!deleted) return { gone: false };
    }
    return { gone: true };
  }

  /**
   * The target groups that exist and carry this object's ownership tags:
   * those recorded in its status and those at its deterministic names.
   * Read-only; throws a typed error when AWS cannot be asked.
   */
  private async ownedTargetGroups(mr: MyIngress): Promise<string[]> {
    const uid = mr.metadata.uid ?? '';
    const arns = new Set<string>();
    for (const recorded of recordedTargetGroups(mr)) {
      const tg = await this.targetGroupBy({ TargetGroupArns: [recorded] });
      if (tg?.TargetGroupArn !== undefined) arns.add(tg.TargetGroupArn);
    }
    for (const want of desiredTargetGroups(mr.spec, uid)) {
      const tg = await this.targetGroupBy({ Names: [want.name] });
      if (tg?.TargetGroupArn !== undefined) arns.add(tg.TargetGroupArn);
    }
    if (arns.size === 0) return [];
    const tags = await this.tagsOf([...arns]);
    return [...arns].filter((a) => ownershipFromTags(tags.get(a) ?? {})?.uid === uid);
  }

  private async findLoadBalancer(mr: MyIngress): Promise<LoadBalancer | undefined> {
    const ext = mr.spec.externalName;
    if (ext !== undefined && ext !== '') return this.d.describer.describe(ext);
    const recorded = typeof mr.status?.arn === 'string' ? mr.status.arn : undefined;
    if (recorded !== undefined) {
      const lb = await this.d.describer.describe(recorded);
      if (lb !== undefined) return lb;
    }
    const name = loadBalancerName(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
    const out = await lookup('find load balancer', elbv2ErrorTable, isElbv2NotFound, () =>
      this.d.elbv2.send(new DescribeLoadBalancersCommand({ Names: [name] })),
    );
    return out?.LoadBalancers?.[0];
  }

  private async observeTargetGroups(
    mr: MyIngress,
    ctx: ReconcileContext,
    lbArn: string,
  ): Promise<ObservedTargetGroup[]> {
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
      const tg =
        attached.find((t) => t.TargetGroupName === want.name) ?? (await this.targetGroupByName(want.name));
      let registered: string[] = [];
      if (tg?.TargetGroupArn !== undefined) {
        const tgArn = tg.TargetGroupArn;
        const health = await call('describe target health', () =>
          this.d.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn })),
        );
        registered = (health.TargetHealthDescriptions ?? [])
          .filter((h) => h.TargetHealth?.State !== 'draining')
          .map((h) => `${h.Target?.Id ?? ''}:${h.Target?.Port ?? ''}`)
          .sort();
      }
      out.push({ want, tg, registered, wanted: this.wantedTargets(mr, want) });
    }
    return out;
  }

  private wantedTargets(mr: MyIngress, want: DesiredTargetGroup): string[] | undefined {
    const ns = mr.metadata.namespace ?? '';
    const svc = this.d.service(ns, want.service) as ServiceLike | undefined;
    if (svc === undefined) return undefined;
    const slices = this.d.endpointSlices(ns, want.service) as unknown as EndpointSliceLike[];
    const resolved = resolveTargets(svc, slices, want.port);
    return resolved === undefined ? [] : resolved.ips.map((ip) => `${ip}:${resolved.port}`).sort();
  }

  private targetGroupByName(name: string): Promise<TargetGroup | undefined> {
    return this.targetGroupBy({ Names: [name] });
  }

  /** The one target group with that name or ARN, or undefined when there is none. */
  private async targetGroupBy(
    query: { Names: string[] } | { TargetGroupArns: string[] },
  ): Promise<TargetGroup | undefined> {
    const out = await lookup('find target group', elbv2ErrorTable, isElbv2NotFound, () =>
      this.d.elbv2.send(new DescribeTargetGroupsCommand(query)),
    );
    return out?.TargetGroups?.[0];
  }

  private async createTargetGroup(
    mr: MyIngress,
    ctx: ReconcileContext,
    want: DesiredTargetGroup,
    vpcId: string,
    wanted: string[] | undefined,
  ): Promise<TargetGroup> {
    const port = Number(wanted?.[0]?.split(':').pop() ?? want.port) || want.port;
    const h = want.healthCheck;
    const tg = await createOrFind({
      what: `create target group ${want.name}`,
      table: elbv2ErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DuplicateTargetGroupName'),
      ownership: ctx.ownership,
      find: async () => {
        const found = await this.targetGroupByName(want.name);
        return this.withTags(found, found?.TargetGroupArn);
      },
      create: async () =>
        (
          await this.d.elbv2Create.send(
            new CreateTargetGroupCommand({
              Name: want.name,
              Protocol: 'HTTP',
              Port: port,
              VpcId: vpcId,
              TargetType: 'ip',
              HealthCheckPath: h.path,
              HealthCheckIntervalSeconds: h.intervalSeconds,
              HealthCheckTimeoutSeconds: h.timeoutSeconds,
              HealthyThresholdCount: h.healthyThresholdCount,
              UnhealthyThresholdCount: h.unhealthyThresholdCount,
              Matcher: { HttpCode: h.matcher },
              Tags: ownedTagList(mr.spec.tags, ctx.ownership),
            }),
          )
        ).TargetGroups?.[0],
    });
    if (tg?.TargetGroupArn === undefined)
      throw new RetryableError('AWSError', `create target group ${want.name}: no ARN returned`);
    const tgArn = tg.TargetGroupArn;
    if (wanted !== undefined && wanted.length > 0) {
      await call('register targets', () =>
        this.d.elbv2.send(new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets: wanted.map(target) })),
      );
    }
    return tg;
  }

  /** A resource found under a taken name, with its tags (for createOrFind). */
  private async withTags<T>(
    value: T | undefined,
    arn: string | undefined,
  ): Promise<{ value: T; tags: Record<string, string> } | undefined> {
    if (value === undefined || arn === undefined) return undefined;
    return { value, tags: (await this.tagsOf([arn])).get(arn) ?? {} };
  }

  /** Deletes a target group; false while a listener or rule still uses it. */
  private async deleteTargetGroup(arn: string): Promise<boolean> {
    try {
      await this.d.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn }));
      return true;
    } catch (err) {
      if (isElbv2NotFound(err)) return true;
      if (isResourceInUse(err)) return false;
      throw toTypedAwsError('delete target group', err, elbv2ErrorTable);
    }
  }

  /** Tags of each ARN that exists (batched with other objects' lookups). */
  private async tagsOf(arns: string[]): Promise<Map<string, Record<string, string>>> {
    const tags = await Promise.all(arns.map((a) => this.d.tagDescriber.tags(a)));
    return new Map(arns.flatMap((a, i) => (tags[i] !== undefined ? [[a, tags[i]] as const] : [])));
  }

  private async subnets(mr: MyIngress): Promise<string[]> {
    if (mr.spec.subnets !== undefined) return mr.spec.subnets;
    const tags = mr.spec.subnetSelector?.tags ?? {};
    const out = await call('find subnets by tag', () =>
      this.d.ec2.send(
        new DescribeSubnetsCommand({
          Filters: Object.entries(tags).map(([k, v]) => ({ Name: `tag:${k}`, Values: [v] })),
        }),
      ),
    );
    const ids = (out.Subnets ?? []).map((s) => s.SubnetId ?? '').filter((s) => s !== '');
    if (ids.length < 2) {
      throw new TerminalError(
        `spec.subnetSelector matches ${ids.length} subnet(s); an Application Load Balancer needs at least two, in different Availability Zones`,
      );
    }
    return ids;
  }
}

function recordedTargetGroups(mr: MyIngress): string[] {
  const tgs = mr.status?.targetGroups;
  if (!Array.isArray(tgs)) return [];
  return tgs
    .map((t: unknown) => (t as { arn?: unknown }).arn)
    .filter((a): a is string => typeof a === 'string');
}

function target(s: string): { Id: string; Port: number } {
  const i = s.lastIndexOf(':');
  return { Id: s.slice(0, i), Port: Number(s.slice(i + 1)) };
}

async function ignoreNotFound(fn: () => Promise<unknown>, what: string): Promise<void> {
  await lookup(what, elbv2ErrorTable, isElbv2NotFound, fn);
}
