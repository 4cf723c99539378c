// TeamPolicies and a group's members. A group's load balancer is the platform team's, reconciled
// with the operator's own identity; each member (a MyIngress naming the group, or a Gateway's
// HTTPRoute) is served on it only when its namespace's tenancy allows that: a refused namespace is
// refused, a namespace whose policy maps it to another identity or region is refused (its rules
// would be carried out as the operator, not as its team), and a namespace whose load-balancer-level
// guardrails the group's load balancer does not meet is refused. The member-level guardrail — which
// EndpointSlice managers may give its backends their targets — is applied to what it contributes.
import type { TeamPolicy } from '../../../apis/teampolicy.ts';
import type { Tenancy } from '../../../tenancy/selection.ts';
import type { TenantSource, TenancyChange } from '../../../tenancy/directory.ts';
import { ForbiddenError } from '../../../runtime/errors.ts';
import { gatewayAnnotation } from '../gateway/names.ts';
import { anyEndpointSliceManager } from '../backends.ts';
import { checkMyIngress, loadBalancerGuardrailsOf, type GuardLookups } from '../guardrails.ts';
import type { MyIngressSpec } from '../api.ts';
import type { MyIngressGroup } from './api.ts';

/** How a member's namespace stands with a group: served (nothing to refuse), or refused and why. */
export type MemberTenancy =
  { readonly kind: 'served' } | { readonly kind: 'refused'; readonly message: string };

const served: MemberTenancy = { kind: 'served' };

/**
 * Who is judged against a namespace's tenancy: a member of a group (a MyIngress naming it, a
 * Gateway's route), or a Gateway itself (its load balancer, made in its own namespace's name).
 */
export type Judged = 'member' | 'gateway';

/**
 * How the tenancy of each of `namespaces` stands with `group` (every one of them in the answer).
 * May read AWS; throws to have the reconcile retried.
 */
export type MemberTenancyJudge = (
  group: MyIngressGroup,
  namespaces: readonly string[],
) => Promise<ReadonlyMap<string, MemberTenancy>>;

/**
 * The identity verdict for a member of `group` in `namespace` under `tenancy` (undefined: not
 * known, refused): a refused tenancy is refused with its own message; a policy naming a role
 * (`spec.aws.roleArn`) or a region other than `ownRegion` is refused, with a message naming the
 * policy, the identity and the fix; a policy of the operator's identity and region, or no policy
 * at all (unrestricted), is served as far as identity goes — its guardrails are checked next
 * ({@link checkGroupGuardrails}). `judged` (default a member) says whose refusal it is: a
 * Gateway's own load balancer is judged by the same rule (judgeGatewayTenancy). Pure.
 */
export function memberIdentity(
  tenancy: Tenancy | undefined,
  group: MyIngressGroup,
  namespace: string,
  ownRegion: string,
  judged: Judged = 'member',
): MemberTenancy {
  if (tenancy === undefined)
    return {
      kind: 'refused',
      message: `the TeamPolicies of namespace ${namespace} are not listed yet; its ${judged === 'member' ? 'members are served' : 'Gateways are programmed'} once they are`,
    };
  if (tenancy.kind === 'refused') return { kind: 'refused', message: tenancy.message };
  if (tenancy.kind === 'unrestricted') return served;
  const p = tenancy.policy;
  const role = p.spec.aws?.roleArn;
  const region = p.spec.aws?.region;
  if ((role === undefined || role === '') && (region === undefined || region === ownRegion)) return served;
  const identity = [
    ...(role !== undefined && role !== '' ? [`role ${role}`] : []),
    ...(region !== undefined && region !== ownRegion ? [`region ${region}`] : []),
  ].join(' in ');
  return {
    kind: 'refused',
    message: `TeamPolicy ${p.metadata.name} serves namespace ${namespace} as ${identity}, but ${groupWords(group)}'s load balancer is the operator's own, in the operator's identity and region ${ownRegion}: ${judged === 'member' ? 'a member is never served' : "a Gateway's load balancer is never made"} with another identity than its namespace's. Either the platform team serves namespace ${namespace} with the operator's identity (a TeamPolicy without spec.aws.roleArn${region !== undefined && region !== ownRegion ? ` and with region ${ownRegion}` : ''}), or the team uses a load balancer in its own account (a MyIngress without spec.group${judged === 'member' ? ', or its own Gateway' : ''})`,
  };
}

/**
 * Checks the group's load balancer (`lb`: its load balancer fields and listeners, as a MyIngress
 * spec) against the load-balancer-level guardrails of `policy` (spec.guardrails.loadBalancers:
 * schemes, subnets, security groups, inboundCIDRs, certificates, web ACLs, access log buckets),
 * with the operator's own lookups. Resolves to undefined when it meets them, else to why not, in the
 * policy's words; a group importing certificates from Secrets (listeners[].certificateRefs) does not
 * meet a policy limiting certificates (their ACM ARNs are the group's, not among a team's). Throws
 * anything else the lookups throw. Reads only; the same for every namespace of the policy.
 */
export async function groupGuardrailProblem(
  policy: TeamPolicy,
  group: MyIngressGroup,
  lb: MyIngressSpec,
  lookups: GuardLookups,
): Promise<string | undefined> {
  const g = loadBalancerGuardrailsOf(policy);
  if (g === undefined) return undefined;
  const certs = g.certificates;
  const refs = group.spec.listeners.flatMap((l) => l.certificateRefs ?? []);
  if (certs !== undefined && (certs.arns !== undefined || certs.tags !== undefined) && refs.length > 0)
    return 'its listeners serve certificates imported from Secrets (listeners[].certificateRefs), and the policy limits the certificates this namespace may be served with (spec.guardrails.loadBalancers.certificates)';
  try {
    await checkMyIngress(policy, lb, lookups);
    return undefined;
  } catch (err) {
    if (err instanceof ForbiddenError) return err.message;
    throw err;
  }
}

/**
 * A member of `namespace` (or, `judged` a Gateway, the Gateway of that namespace) refused because
 * the group's load balancer does not meet its `policy` (`why`: {@link groupGuardrailProblem}'s),
 * with who can fix it. Pure.
 */
export function guardrailRefusal(
  group: MyIngressGroup,
  namespace: string,
  policy: TeamPolicy,
  why: string,
  judged: Judged = 'member',
): MemberTenancy {
  return {
    kind: 'refused',
    message:
      judged === 'member'
        ? `${groupWords(group)}'s load balancer does not meet namespace ${namespace}'s TeamPolicy ${policy.metadata.name} (a member is served on a shared load balancer only when its policy allows what that load balancer uses): ${why}. Either the platform team changes the group or the policy's spec.guardrails.loadBalancers, or this namespace uses another group or Gateway (or a MyIngress of its own)`
        : `${groupWords(group)}'s load balancer does not meet namespace ${namespace}'s TeamPolicy ${policy.metadata.name} (a Gateway's load balancer is made only when its namespace's policy allows what it uses): ${why}. Either the platform team changes the operator's Gateway settings (--gateway-scheme, --gateway-subnet-tags, --gateway-inbound-cidrs) or the policy's spec.guardrails.loadBalancers, or the Gateway is made in another namespace (or the team uses a MyIngress of its own)`,
  };
}

/** {@link groupGuardrailProblem} for one namespace: served, or {@link guardrailRefusal}. Reads only. */
export async function checkGroupGuardrails(
  policy: TeamPolicy,
  group: MyIngressGroup,
  lb: MyIngressSpec,
  namespace: string,
  lookups: GuardLookups,
): Promise<MemberTenancy> {
  const why = await groupGuardrailProblem(policy, group, lb, lookups);
  return why === undefined ? served : guardrailRefusal(group, namespace, policy, why);
}

/**
 * How the tenancy of Gateway namespace `namespace` stands with `group`, the MyIngressGroup a
 * Gateway there would get ({@link judgeGatewayTenancy} with the operator's identity). May read AWS;
 * throws to have the reconcile retried.
 */
export type GatewayTenancyJudge = (namespace: string, group: MyIngressGroup) => Promise<MemberTenancy>;

/**
 * How Gateway `namespace`'s own tenancy stands with `group`, the MyIngressGroup the Gateway would
 * get (its load balancer, made with the operator's identity in region `ownRegion`): the member's
 * rules applied to the Gateway itself — a refused tenancy is refused; a policy naming another
 * identity or region is refused (memberIdentity); under a policy, the group's load balancer must
 * meet its spec.guardrails.loadBalancers (groupGuardrailProblem, with `lookups`: the operator's
 * own). No TeamPolicy at all (unrestricted): served. Reads AWS only for guardrails needing a lookup;
 * throws what the lookups throw (the reconcile is retried).
 */
export async function judgeGatewayTenancy(
  tenancy: Tenancy,
  group: MyIngressGroup,
  namespace: string,
  ownRegion: string,
  lookups: GuardLookups,
): Promise<MemberTenancy> {
  const identity = memberIdentity(tenancy, group, namespace, ownRegion, 'gateway');
  if (identity.kind === 'refused' || tenancy.kind !== 'policy') return identity;
  const why = await groupGuardrailProblem(tenancy.policy, group, groupLoadBalancerSpec(group), lookups);
  return why === undefined ? served : guardrailRefusal(group, namespace, tenancy.policy, why, 'gateway');
}

/**
 * A group's load balancer as a MyIngress spec, for the guardrail check: its load balancer fields
 * and listeners (without the Secrets a listener imports, and without members' rules). Pure.
 */
export function groupLoadBalancerSpec(group: MyIngressGroup): MyIngressSpec {
  const { allowedNamespaces: _allowed, listeners, ...lb } = group.spec;
  return {
    ...lb,
    listeners: listeners.map(({ certificateRefs: _refs, ...l }) => ({
      ...l,
      defaultAction: l.defaultAction ?? { fixedResponse: { statusCode: 404 } },
    })),
  };
}

/**
 * The EndpointSlice managers (besides Kubernetes' EndpointSlice controller) trusted to give a
 * member's backend its targets: those the member namespace's policy lists
 * (spec.guardrails.loadBalancers.endpointSliceManagers) and, for a Service of another namespace (a
 * route's, allowed by a ReferenceGrant), also that namespace's policy: a manager both trust (`*`
 * trusts any, so the other side's list stands). No
 * policy (undefined: none, refused, or not listed): none. Pure.
 */
export function trustedManagers(
  memberPolicy: TeamPolicy | undefined,
  servicePolicy: TeamPolicy | undefined,
  sameNamespace: boolean,
): readonly string[] {
  const of = (p: TeamPolicy | undefined): readonly string[] =>
    (p !== undefined ? loadBalancerGuardrailsOf(p)?.endpointSliceManagers : undefined) ?? [];
  const mine = of(memberPolicy);
  if (sameNamespace) return mine;
  const theirs = of(servicePolicy);
  // `*` trusts every manager: with it on one side, the other side's list is what both trust.
  if (mine.includes(anyEndpointSliceManager)) return theirs;
  if (theirs.includes(anyEndpointSliceManager)) return mine;
  return mine.filter((m) => theirs.includes(m));
}

/**
 * A group controller's view of tenancy changes: any change (a policy created, changed or deleted;
 * a namespace's labels) reconciles every group, since any may have members in the namespaces
 * concerned (groups are cluster-scoped: the controller's per-namespace filter would match none).
 * Undefined without a tenant source.
 */
export function groupTenancyChanges(
  tenants: TenantSource | undefined,
): { onChange(cb: (change: TenancyChange) => void): void } | undefined {
  if (tenants === undefined) return undefined;
  return { onChange: (cb) => tenants.onChange(() => cb('all')) };
}

/** "MyIngressGroup <name>", or "Gateway <ns>/<name>" for a Gateway's group. Pure. */
function groupWords(group: MyIngressGroup): string {
  const gateway = group.metadata.annotations?.[gatewayAnnotation];
  return gateway !== undefined && gateway !== ''
    ? `Gateway ${gateway} (MyIngressGroup ${group.metadata.name})`
    : `MyIngressGroup ${group.metadata.name}`;
}
