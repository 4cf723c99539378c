// A member whose rules AWS refuses for good (a terminal answer to the CreateRule or
// CreateTargetGroup of a child made for it: TooManyRules, TooManyTargetGroups, a condition AWS
// does not take, …) would otherwise stop the whole group at that call on every pass: the members
// after it never get their rules, and nothing says whose rules were refused. Instead the member is
// left off the load balancer and listed Invalid with AWS's words, so the others are applied and its
// own status (a MyIngress's Synced, a route's Accepted) can say why. It is tried again once its
// generation changes (its spec was edited) or after refusalRetryMs (a quota may have been raised).
// Pure.
import { AwsTerminalError } from '../../../providers/aws/errors.ts';
import { ExplainedRefusal } from '../../../providers/aws/refusals.ts';
import type { MyIngress } from '../api.ts';
import { MemberState, type GroupMemberStatus } from './api.ts';
import type { GroupPlan } from './plan.ts';

/** How long a refused member stays off the load balancer before its rules are tried again. */
export const refusalRetryMs = 10 * 60_000;

/** Operations whose request names the child it makes (its `skylift.dev/member` tag): a refusal is that member's. */
const memberCreates: readonly string[] = ['CreateRule', 'CreateTargetGroup'];

/** AWS's refusal of a member's rules, as the group remembers it. */
export interface MemberRefusal {
  /** The member's uid and the generation whose rules were refused. */
  readonly uid: string;
  readonly generation: number | undefined;
  /** What AWS said, for the member's status. */
  readonly message: string;
  /** When (ms) it was refused. */
  readonly at: number;
}

/**
 * The member whose child AWS refused: `err` a terminal refusal of an operation that makes one
 * child (memberCreates), `child` the child whose member tags that request asked for last (a
 * rule's `<port>/<priority>`, a target group's key), `attribution` the plan's child → member uid.
 * Undefined for any other failure (a passing one, the load balancer's or a listener's own), which
 * stays the group's. Pure.
 */
export function refusedMember(
  err: unknown,
  child: string | undefined,
  attribution: ReadonlyMap<string, string>,
): { readonly uid: string; readonly message: string } | undefined {
  if (!(err instanceof AwsTerminalError) || child === undefined) return undefined;
  const operation = err.operation;
  if (operation === undefined || !memberCreates.includes(operation)) return undefined;
  const uid = attribution.get(child);
  if (uid === undefined) return undefined;
  // AWS's own words: an explained refusal speaks of the merged spec's fields, not the member's.
  const aws = awsAnswer(err);
  const words = aws.awsMessage ?? aws.message;
  const code = aws.code !== undefined && !words.includes(aws.code) ? `${aws.code}: ` : '';
  return { uid, message: `Elastic Load Balancing refused ${operation} for its rules: ${code}${words}` };
}

/** The refusal as AWS answered it: the first in `err`'s causes that is not an explanation of another. Pure. */
function awsAnswer(err: AwsTerminalError): AwsTerminalError {
  let e: AwsTerminalError = err;
  while (e instanceof ExplainedRefusal && e.cause instanceof AwsTerminalError) e = e.cause;
  return e;
}

/**
 * The refusals that still hold for `members`: the member is there, not being deleted or leaving,
 * at the generation refused, and the refusal is younger than refusalRetryMs. Pure.
 */
export function standingRefusals(
  refusals: Iterable<MemberRefusal>,
  members: readonly MyIngress[],
  now: number,
): Map<string, MemberRefusal> {
  const out = new Map<string, MemberRefusal>();
  for (const r of refusals) {
    const m = members.find((x) => x.metadata.uid === r.uid);
    if (m === undefined || m.metadata.deletionTimestamp !== undefined) continue;
    if (m.metadata.generation !== r.generation || now - r.at >= refusalRetryMs) continue;
    out.set(r.uid, r);
  }
  return out;
}

/**
 * `plan` (made without the refused members) with each refused member listed Invalid at the
 * refused generation with AWS's words and no rules; the load balancer is wanted while one is
 * listed, as for any member the group refuses. Pure.
 */
export function withRefusedMembers(
  plan: GroupPlan,
  refused: readonly { readonly member: MyIngress; readonly refusal: MemberRefusal }[],
): GroupPlan {
  if (refused.length === 0) return plan;
  const entries: GroupMemberStatus[] = refused.map(({ member, refusal }) => ({
    namespace: member.metadata.namespace ?? '',
    name: member.metadata.name,
    uid: refusal.uid,
    observedGeneration: refusal.generation,
    state: MemberState.Invalid,
    message: `${refusal.message}; its rules are left off the load balancer (tried again when its spec changes)`,
    rules: 0,
  }));
  return { ...plan, members: [...plan.members, ...entries], wanted: true };
}
