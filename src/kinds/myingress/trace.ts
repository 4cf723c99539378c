// MyIngress → load balancer → listeners → rules, and target groups → targets.
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type Action,
  type Listener,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { isElbv2NotFound } from '../../providers/elbv2/errors.ts';
import type { ManagedObject } from '../../apis/managed.ts';
import type { Collector, TraceContext } from '../../trace/context.ts';
import { describeSafely, errorNode, node, notFoundNode, NotFoundInAws } from '../../trace/tree.ts';
import type { TraceNode } from '../../trace/tree.ts';

/** The status fields the trace reads: a MyIngress's, or a MyIngressGroup's (the same load balancer fields). */
export interface LoadBalancerTraceStatus {
  arn?: string | undefined;
  listeners?: { port?: number | undefined; arn?: string | undefined }[] | undefined;
  targetGroups?: TargetGroupTraceStatus[] | undefined;
}

/** A target group as the status records it. */
export interface TargetGroupTraceStatus {
  service?: string | undefined;
  port?: number | undefined;
  arn?: string | undefined;
  registeredTargets?: number | undefined;
}

/**
 * Whom a shared load balancer's rules and target groups are for (a MyIngressGroup's members): extra
 * details for their nodes. Absent: the load balancer is one object's and says nothing more.
 */
export interface TraceAttribution {
  /**
   * The details naming whom each of one listener's rules is for, by rule ARN. May call AWS
   * read-only; never throws (what it cannot tell it leaves out).
   */
  rules(ctx: TraceContext, rules: readonly Rule[]): Promise<ReadonlyMap<string, readonly string[]>>;
  /** The details naming whom a target group recorded in status is for. Pure. */
  targetGroup(tg: TargetGroupTraceStatus): readonly string[];
}

/** The name part of an ELBv2 ARN (`…:loadbalancer/app/NAME/id`, `…:targetgroup/NAME/id`). Pure. */
export function elbv2ArnName(arn: string): string {
  const parts = arn.split(':').pop()?.split('/') ?? [];
  const name = parts[0] === 'loadbalancer' || parts[0] === 'listener' ? parts[2] : parts[1];
  return name ?? arn;
}

/** A listener rule or default action in a few words. Pure. */
export function describeAction(actions: readonly Action[] | undefined): string {
  const a = actions?.[0];
  if (a === undefined) return 'no action';
  if (a.Type === 'forward') {
    const groups = a.ForwardConfig?.TargetGroups ?? [];
    if (groups.length > 1)
      return `forward to ${groups.map((g) => `${elbv2ArnName(g.TargetGroupArn ?? '')} (weight ${g.Weight ?? 1})`).join(', ')}`;
    const arn = a.TargetGroupArn ?? groups[0]?.TargetGroupArn ?? '';
    return `forward to ${elbv2ArnName(arn)}`;
  }
  if (a.Type === 'redirect') {
    const r = a.RedirectConfig;
    return `redirect ${r?.StatusCode ?? ''} ${r?.Path ?? ''}`.trim();
  }
  if (a.Type === 'fixed-response') return `fixed-response ${a.FixedResponseConfig?.StatusCode ?? ''}`.trim();
  return a.Type ?? 'unknown action';
}

/** The MyIngress collector: the load balancer recorded in status, described live with its children. */
export const traceMyIngress: Collector = (obj: ManagedObject, ctx: TraceContext) =>
  traceLoadBalancer((obj.status ?? {}) as LoadBalancerTraceStatus, ctx);

/**
 * The load balancer recorded in `st`, described live: its listeners with their rules, and the
 * target groups recorded with their targets' health; `attribution` adds whom each rule and target
 * group is for (a shared load balancer's). One node: NotCreated when no ARN is recorded. Read-only;
 * never throws for AWS errors (they become Error nodes).
 */
export async function traceLoadBalancer(
  st: LoadBalancerTraceStatus,
  ctx: TraceContext,
  attribution?: TraceAttribution,
): Promise<TraceNode[]> {
  if (st.arn === undefined || st.arn === '') {
    return [node('LoadBalancer', '-', 'NotCreated', false, ['no load balancer recorded in status yet'])];
  }
  const arn = st.arn;
  return [
    await describeSafely(
      'LoadBalancer',
      elbv2ArnName(arn),
      async () => {
        const lb = (
          await (await ctx.aws.elbv2()).send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [arn] }))
        ).LoadBalancers?.[0];
        if (lb === undefined) throw new NotFoundInAws(arn);
        const state = lb.State?.Code ?? 'unknown';
        const children = [
          ...(await listenerNodes(ctx, arn, st, attribution)),
          ...(await targetGroupNodes(ctx, st, attribution)),
        ];
        return node(
          'LoadBalancer',
          lb.LoadBalancerName ?? elbv2ArnName(arn),
          state,
          state === 'active',
          [`dns=${lb.DNSName ?? ''}`, `scheme=${lb.Scheme ?? ''}`],
          children,
        );
      },
      isElbv2NotFound,
    ),
  ];
}

async function listenerNodes(
  ctx: TraceContext,
  lbArn: string,
  st: LoadBalancerTraceStatus,
  attribution: TraceAttribution | undefined,
): Promise<TraceNode[]> {
  let live: Listener[];
  try {
    live =
      (await (await ctx.aws.elbv2()).send(new DescribeListenersCommand({ LoadBalancerArn: lbArn })))
        .Listeners ?? [];
  } catch (err) {
    return [errorNode('Listener', '*', err)];
  }
  const nodes: TraceNode[] = [];
  for (const l of [...live].sort((a, b) => (a.Port ?? 0) - (b.Port ?? 0))) {
    const name = `${l.Protocol ?? '?'}:${l.Port ?? '?'}`;
    nodes.push(
      await describeSafely(
        'Listener',
        name,
        async () => {
          const rules = (
            await (await ctx.aws.elbv2()).send(new DescribeRulesCommand({ ListenerArn: l.ListenerArn }))
          ).Rules;
          const owners = attribution !== undefined ? await attribution.rules(ctx, rules ?? []) : new Map();
          return node(
            'Listener',
            name,
            'exists',
            true,
            [`default: ${describeAction(l.DefaultActions)}`],
            ruleNodes(rules, owners),
          );
        },
        isElbv2NotFound,
      ),
    );
  }
  // Listeners recorded in status that AWS no longer has.
  for (const s of st.listeners ?? []) {
    if (s.arn !== undefined && !live.some((l) => l.ListenerArn === s.arn))
      nodes.push(notFoundNode('Listener', `port ${s.port ?? '?'}`));
  }
  return nodes;
}

function ruleNodes(
  rules: readonly Rule[] | undefined,
  owners: ReadonlyMap<string, readonly string[]>,
): TraceNode[] {
  return (rules ?? [])
    .filter((r) => r.IsDefault !== true)
    .sort((a, b) => Number(a.Priority) - Number(b.Priority))
    .map((r) => {
      const when = (r.Conditions ?? []).map((c) => {
        const values = c.Values ?? c.PathPatternConfig?.Values ?? c.HostHeaderConfig?.Values ?? [];
        return `${c.Field ?? '?'}=${values.join(',')}`;
      });
      return node('Rule', `priority ${r.Priority ?? '?'}`, 'exists', true, [
        ...when,
        `→ ${describeAction(r.Actions)}`,
        ...(owners.get(r.RuleArn ?? '') ?? []),
      ]);
    });
}

async function targetGroupNodes(
  ctx: TraceContext,
  st: LoadBalancerTraceStatus,
  attribution: TraceAttribution | undefined,
): Promise<TraceNode[]> {
  const nodes: TraceNode[] = [];
  for (const tg of st.targetGroups ?? []) {
    const arn = tg.arn;
    if (arn === undefined) continue;
    nodes.push(
      await describeSafely(
        'TargetGroup',
        elbv2ArnName(arn),
        async () => {
          const live = (
            await (await ctx.aws.elbv2()).send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] }))
          ).TargetGroups?.[0];
          if (live === undefined) throw new NotFoundInAws(arn);
          const health = await (
            await ctx.aws.elbv2()
          ).send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
          const targets = (health.TargetHealthDescriptions ?? []).map((d) => {
            const state = d.TargetHealth?.State ?? 'unknown';
            const why = [d.TargetHealth?.Reason, d.TargetHealth?.Description].filter((x) => x !== undefined);
            // Target health is the application's, not Skylift's: shown, never failing the trace.
            return node('Target', `${d.Target?.Id ?? '?'}:${d.Target?.Port ?? '?'}`, state, undefined, why);
          });
          return node(
            'TargetGroup',
            live.TargetGroupName ?? elbv2ArnName(arn),
            'exists',
            true,
            [
              `${live.Protocol ?? '?'}:${live.Port ?? '?'}`,
              `service=${tg.service ?? '?'}:${tg.port ?? '?'}`,
              `targets=${targets.length}`,
              ...(attribution?.targetGroup(tg) ?? []),
            ],
            targets,
          );
        },
        isElbv2NotFound,
      ),
    );
  }
  return nodes;
}
