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

/** The MyIngress status fields the trace reads. */
interface MyIngressStatus {
  arn?: string;
  listeners?: { port?: number; arn?: string }[];
  targetGroups?: { service?: string; port?: number; arn?: string; registeredTargets?: number }[];
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
export const traceMyIngress: Collector = async (obj: ManagedObject, ctx: TraceContext) => {
  const st = (obj.status ?? {}) as MyIngressStatus;
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
        const children = [...(await listenerNodes(ctx, arn, st)), ...(await targetGroupNodes(ctx, st))];
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
};

async function listenerNodes(ctx: TraceContext, lbArn: string, st: MyIngressStatus): Promise<TraceNode[]> {
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
          return node(
            'Listener',
            name,
            'exists',
            true,
            [`default: ${describeAction(l.DefaultActions)}`],
            ruleNodes(rules),
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

function ruleNodes(rules: readonly Rule[] | undefined): TraceNode[] {
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
      ]);
    });
}

async function targetGroupNodes(ctx: TraceContext, st: MyIngressStatus): Promise<TraceNode[]> {
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
