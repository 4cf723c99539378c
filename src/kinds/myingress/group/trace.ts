// MyIngressGroup → the shared load balancer → listeners → rules (each saying which member it is
// for), target groups (likewise) → targets; then the members with their states. The load balancer
// part is MyIngress's collector on the group's status (the same fields); what is the group's own
// here is the attribution: a rule's `skylift.dev/member` tag (one DescribeTags per 20 rules),
// else the member its forward's target group was made for (the backend name in status).
import { DescribeTagsCommand, type Rule } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { ManagedObject } from '../../../apis/managed.ts';
import { awsErrorCode } from '../../../providers/aws/errors.ts';
import { sharedMemberTagKey } from '../../../runtime/sharedResource.ts';
import type { Collector, TraceContext } from '../../../trace/context.ts';
import { node, type TraceNode } from '../../../trace/tree.ts';
import { traceLoadBalancer, type TargetGroupTraceStatus, type TraceAttribution } from '../trace.ts';
import { MemberState, type GroupMemberStatus, type MyIngressGroupStatus } from './api.ts';
import { parseGroupBackendName } from './plan.ts';

/** DescribeTags takes at most 20 ARNs. */
const tagBatch = 20;

/**
 * The MyIngressGroup collector: the shared load balancer recorded in status, described live as a
 * MyIngress's is, each rule and target group naming its member (`member=<namespace>/<name>`); then
 * one Member node per member listed in status. A member's state is informational (its own trace
 * fails for it): an Attached member is ready, the others are shown with their message. Read-only;
 * never throws for AWS errors.
 */
export const traceMyIngressGroup: Collector = async (obj: ManagedObject, ctx: TraceContext) => {
  const st = (obj.status ?? {}) as MyIngressGroupStatus;
  const members = st.members ?? [];
  const lb = await traceLoadBalancer(st, ctx, groupAttribution(st));
  return [...lb, ...members.map(memberNode)];
};

/** Whom the group's rules and target groups are for, from tags and status. Pure but for `rules`' DescribeTags. */
export function groupAttribution(st: MyIngressGroupStatus): TraceAttribution {
  const byUid = new Map((st.members ?? []).map((m) => [m.uid, `${m.namespace}/${m.name}`]));
  const tgMember = (tg: TargetGroupTraceStatus | undefined): string | undefined => {
    const parsed = parseGroupBackendName(tg?.service ?? '');
    return parsed !== undefined ? `${parsed.memberNamespace}/${parsed.member}` : undefined;
  };
  const byTargetGroup = new Map(
    (st.targetGroups ?? []).flatMap((tg) => {
      const m = tgMember(tg);
      return tg.arn !== undefined && m !== undefined ? [[tg.arn, m] as const] : [];
    }),
  );
  return {
    async rules(ctx, rules) {
      const arns = rules.filter((r) => r.IsDefault !== true).flatMap((r) => r.RuleArn ?? []);
      const { tags, error } = await memberTags(ctx, arns);
      const out = new Map<string, readonly string[]>();
      for (const r of rules) {
        if (r.IsDefault === true || r.RuleArn === undefined) continue;
        const uid = tags.get(r.RuleArn);
        const fromTargetGroup = byTargetGroup.get(forwardTargetGroup(r) ?? '');
        if (uid !== undefined) out.set(r.RuleArn, [`member=${byUid.get(uid) ?? `uid ${uid} (not listed)`}`]);
        else if (fromTargetGroup !== undefined) out.set(r.RuleArn, [`member=${fromTargetGroup}`]);
        else
          out.set(r.RuleArn, [
            error !== undefined
              ? `member=? (tags unreadable: ${error})`
              : `member=? (no ${sharedMemberTagKey} tag)`,
          ]);
      }
      return out;
    },
    targetGroup(tg) {
      const m = tgMember(tg);
      return m !== undefined ? [`member=${m}`] : [];
    },
  };
}

/** The `skylift.dev/member` tag of each ARN that has one; a failed read as its error code. */
async function memberTags(
  ctx: TraceContext,
  arns: readonly string[],
): Promise<{ tags: Map<string, string>; error?: string }> {
  const tags = new Map<string, string>();
  try {
    for (let i = 0; i < arns.length; i += tagBatch) {
      const out = await (
        await ctx.aws.elbv2()
      ).send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + tagBatch) }));
      for (const d of out.TagDescriptions ?? []) {
        const uid = d.Tags?.find((t) => t.Key === sharedMemberTagKey)?.Value;
        if (d.ResourceArn !== undefined && uid !== undefined) tags.set(d.ResourceArn, uid);
      }
    }
    return { tags };
  } catch (err) {
    return { tags, error: awsErrorCode(err) ?? (err instanceof Error ? err.message : String(err)) };
  }
}

/** The target group a rule forwards to, if it forwards. Pure. */
function forwardTargetGroup(r: Rule): string | undefined {
  const a = r.Actions?.find((x) => x.Type === 'forward');
  return a?.TargetGroupArn ?? a?.ForwardConfig?.TargetGroups?.[0]?.TargetGroupArn;
}

/** One member as the group's status lists it. Pure. */
function memberNode(m: GroupMemberStatus): TraceNode {
  return node(
    'Member',
    `${m.namespace}/${m.name}`,
    m.state,
    m.state === MemberState.Attached ? true : undefined,
    [
      `rules=${m.rules}`,
      ...(m.observedGeneration !== undefined ? [`generation=${m.observedGeneration}`] : []),
      ...(m.message !== undefined && m.message !== '' ? [m.message] : []),
    ],
  );
}
