// The MyIngressGroup controller: cluster-scoped groups, each reconciled as one shared load balancer
// from its members (the MyIngresses naming it, in every watched namespace), with the operator's own
// AWS identity (a group is the platform team's: no TeamPolicy serves a cluster-scoped object).
import { Controller, type RunnableController } from '../../../runtime/controller.ts';
import type { ReferenceReader } from '../../../runtime/references.ts';
import { accountsOf, controllerOptions } from '../../controllerOptions.ts';
import type { KindPlumbing } from '../../module.ts';
import { isServiceEndpointSlice } from '../backends.ts';
import { defaultMyIngressSettings, type MyIngressSettings } from '../settings.ts';
import { TargetHealthBoard } from '../targetHealthBoard.ts';
import type { MyIngressClusterDeps } from '../adapterFor.ts';
import type { BackendEndpointSlice, BackendService } from '../references.ts';
import type { GroupDetails, GroupField } from './adapter.ts';
import { myIngressGroupType, type MyIngressGroup } from './api.ts';
import { parseGroupBackendName } from './plan.ts';
import { GroupCertificates } from './certificates.ts';
import {
  groupGuardrailProblem,
  groupLoadBalancerSpec,
  groupTenancyChanges,
  guardrailRefusal,
  judgeGatewayTenancy,
  memberIdentity,
  trustedManagers,
  type GatewayTenancyJudge,
  type MemberTenancy,
  type MemberTenancyJudge,
} from './tenancy.ts';
import { currentPolicy, tenantConnector } from '../../../tenancy/connector.ts';
import type { TenantSource, TenancyChange } from '../../../tenancy/directory.ts';
import { guardLookups } from '../guardrails.ts';
import { hostCertificates } from '../acm.ts';
import { importedCertificatesOf } from '../../../providers/acm/imports.ts';
import { tlsSecretOf, type SecretObject } from '../../../providers/acm/tlsSecret.ts';
import type { AwsClients } from '../../../providers/aws/clients.ts';
import { resourcePath } from '../../../apis/meta.ts';
import { secretType } from '../../../apis/core.ts';
import { isKubeNotFound } from '../../../runtime/errors.ts';
import { andSelector, gatewayUidLabel } from '../gateway/names.ts';
import {
  groupEndpointSliceRef,
  groupKey,
  groupMemberRef,
  groupNamespaceRef,
  groupServiceRef,
  myIngressGroupReferences,
} from './references.ts';

/** Where a group's backends come from: the Services and EndpointSlices of its members' namespaces. */
export interface GroupBackendCaches {
  /** The cached Service `namespace/name`. */
  readonly service: (namespace: string, name: string) => BackendService | undefined;
  /** The cached EndpointSlices of Service `namespace/name`. */
  readonly endpointSlices: (namespace: string, service: string) => BackendEndpointSlice[];
  /** True once both caches have listed. */
  readonly synced: () => boolean;
}

/**
 * What the MyIngress machinery reads from the cluster for a group's merged spec: a backend named
 * `namespace/member/service` (plan.ts) is that member's Service in its namespace. The group has no
 * readiness gates (not yet). Reads the caches only.
 */
export function groupClusterDeps(
  caches: GroupBackendCaches,
  settings: MyIngressSettings,
  tenants?: TenantSource,
): MyIngressClusterDeps {
  return {
    service: (_ns, name) => {
      const b = parseGroupBackendName(name);
      return b !== undefined ? caches.service(b.namespace, b.service) : undefined;
    },
    endpointSlices: (_ns, name) => {
      const b = parseGroupBackendName(name);
      if (b === undefined) return [];
      // Only the EndpointSlice controller's slices, and those of the managers the member's
      // namespace's TeamPolicy trusts (and the Service's, when it is another namespace's).
      const managers = trustedManagers(
        currentPolicy(tenants, b.memberNamespace),
        currentPolicy(tenants, b.namespace),
        b.memberNamespace === b.namespace,
      );
      return caches
        .endpointSlices(b.namespace, b.service)
        .filter((e) => isServiceEndpointSlice(e, b.namespace, b.service, managers));
    },
    backendCachesSynced: () => caches.synced(),
    gatedPod: () => undefined,
    gatedPods: () => [],
    ingressesIn: () => [],
    targetHealth: new TargetHealthBoard(),
    gatePollMs: settings.gatePollMs,
    pollMs: settings.pollMs,
    fullCheckMs: settings.fullCheckMs,
    certificateListMaxAgeMs: settings.certificateListMaxAgeMs,
  };
}

/**
 * The Secret certificates of a group in `aws`'s account: Secrets read with a GET (the operator
 * never lists or watches Secrets; the client's deadline applies), imported through
 * ImportedCertificates. Loads nothing until used.
 */
export function groupCertificatesFor(s: KindPlumbing, aws: AwsClients): GroupCertificates {
  return new GroupCertificates({
    secret: async (namespace, name) => {
      try {
        return tlsSecretOf(await s.client.get<SecretObject>(resourcePath(secretType, { namespace, name })));
      } catch (err) {
        if (isKubeNotFound(err)) return undefined;
        throw err;
      }
    },
    imports: importedCertificatesOf(aws, { clock: s.clock, logger: s.logger }),
    clock: s.clock,
  });
}

/**
 * How the tenancy of each member namespace stands with a group served with `aws` (the operator's
 * own clients): memberIdentity, then, under a policy, the group's load balancer checked against its
 * guardrails with `aws`'s lookups — once per policy, whatever number of namespaces it serves.
 * Undefined without a tenant source (every namespace served). Reads AWS only for guardrails that
 * need a lookup (tags); throws what tenancyOf and the lookups throw (the reconcile is retried).
 */
export function memberTenancyOf(
  s: KindPlumbing,
  aws: AwsClients,
  settings: MyIngressSettings,
): MemberTenancyJudge | undefined {
  const tenants = s.tenants;
  if (tenants === undefined) return undefined;
  const lookups = guardLookups(aws, hostCertificates(aws, s.clock, settings.certificateListMaxAgeMs));
  return async (group, namespaces) => {
    const out = new Map<string, MemberTenancy>();
    const problems = new Map<string, Promise<string | undefined>>();
    const lb = groupLoadBalancerSpec(group);
    for (const ns of namespaces) {
      const tenancy = await tenants.tenancyOf(ns);
      const identity = memberIdentity(tenancy, group, ns, aws.region);
      if (identity.kind === 'refused' || tenancy.kind !== 'policy') {
        out.set(ns, identity);
        continue;
      }
      const policy = tenancy.policy;
      let problem = problems.get(policy.metadata.name);
      if (problem === undefined) {
        problem = groupGuardrailProblem(policy, group, lb, lookups);
        problems.set(policy.metadata.name, problem);
      }
      const why = await problem;
      out.set(ns, why === undefined ? { kind: 'served' } : guardrailRefusal(group, ns, policy, why));
    }
    return out;
  };
}

/**
 * How a Gateway's own namespace stands with the group the Gateway would get: judgeGatewayTenancy
 * with the operator's own clients (a Gateway's load balancer is always made with them) and their
 * guardrail lookups. Undefined without a tenant source (every Gateway programmed). Throws what
 * tenancyOf and the lookups throw (the reconcile is retried).
 */
export function gatewayTenancyOf(
  s: KindPlumbing,
  settings: MyIngressSettings,
): GatewayTenancyJudge | undefined {
  const tenants = s.tenants;
  if (tenants === undefined) return undefined;
  const aws = accountsOf(s).own;
  const lookups = guardLookups(aws, hostCertificates(aws, s.clock, settings.certificateListMaxAgeMs));
  return async (namespace, group) =>
    judgeGatewayTenancy(await tenants.tenancyOf(namespace), group, namespace, aws.region, lookups);
}

/**
 * The Gateway controller's TeamPolicy options: each Gateway's own namespace judged
 * (gatewayTenancyOf) and judged again on every policy or namespace change. None without a tenant
 * source (every Gateway programmed). Calls nothing.
 */
export function gatewayTenancyOptions(
  plumbing: KindPlumbing,
  settings: MyIngressSettings,
): { tenancy?: GatewayTenancyJudge; tenancyChanges?: { onChange(cb: () => void): void } } {
  const tenancy = gatewayTenancyOf(plumbing, settings);
  const tenants = plumbing.tenants;
  return tenancy !== undefined && tenants !== undefined
    ? { tenancy, tenancyChanges: { onChange: (cb) => tenants.onChange(() => cb()) } }
    : {};
}

/** The backend caches of a MyIngressGroup controller. */
function memberBackends(refs: ReferenceReader<MyIngressGroup>): GroupBackendCaches {
  return {
    service: (ns, name) => refs.get(groupServiceRef, ns, name),
    endpointSlices: (ns, service) => refs.list(groupEndpointSliceRef, ns, service),
    synced: () => refs.synced(groupServiceRef) && refs.synced(groupEndpointSliceRef),
  };
}

/** The MyIngressGroup controller. `overrides` replace some of MyIngress's settings (tests). */
export function myIngressGroupController(
  s: KindPlumbing,
  overrides: Partial<MyIngressSettings> = {},
): RunnableController {
  const settings: MyIngressSettings = { ...defaultMyIngressSettings, ...overrides };
  return new Controller<MyIngressGroup, GroupDetails, GroupField>({
    type: myIngressGroupType,
    connector: (refs) =>
      tenantConnector({
        // No tenants: a group is served with the operator's own identity; its members' namespaces'
        // tenancy is judged per member (memberTenancyOf).
        accounts: accountsOf(s),
        adapterFor: async (aws) => {
          const [{ myIngressAdapterFor }, { MyIngressGroupAdapter }] = await Promise.all([
            import('../adapterFor.ts'),
            import('./adapter.ts'),
          ]);
          const ingress = await myIngressAdapterFor(
            aws,
            s.clock,
            groupClusterDeps(memberBackends(refs), settings, s.tenants),
          );
          const memberTenancy = memberTenancyOf(s, aws, settings);
          return new MyIngressGroupAdapter(ingress, {
            ...(memberTenancy !== undefined ? { memberTenancy } : {}),
            members: (g) => refs.filed(groupMemberRef, groupKey(g.metadata.name)),
            namespaceLabels: (ns) => refs.get(groupNamespaceRef, '', ns)?.metadata.labels,
            synced: () => refs.synced(groupMemberRef),
            certificates: groupCertificatesFor(s, aws),
          });
        },
      }),
    ...controllerOptions(s),
    ...groupTenancyOption(s),
    // A Gateway's group is the Gateway API front end's (gateway/controller.ts), not this one's.
    labelSelector: andSelector(s.settings.labelSelector, `!${gatewayUidLabel}`),
    pollMs: settings.pollMs,
    references: myIngressGroupReferences,
  });
}

/** The group controllers' tenancyChanges option: every group on any change (groupTenancyChanges). */
export function groupTenancyOption(s: KindPlumbing): {
  tenancyChanges?: { onChange(cb: (change: TenancyChange) => void): void };
} {
  const changes = groupTenancyChanges(s.tenants);
  return changes !== undefined ? { tenancyChanges: changes } : {};
}
