import { myIngressType, type MyIngress } from './api.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import type { ReferenceReader } from '../../runtime/references.ts';
import { accountsOf, controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import type { MyIngressDetails, MyIngressField } from './adapter.ts';
import type { MyIngressClusterDeps } from './adapterFor.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { currentPolicy, tenantConnector } from '../../tenancy/connector.ts';
import { checkMyIngress, guardLookups, loadBalancerGuardrailsOf } from './guardrails.ts';
import { defaultMyIngressSettings, type MyIngressSettings } from './settings.ts';
import { hostCertificates } from './acm.ts';
import { isServiceEndpointSlice } from './backends.ts';
import {
  backendEndpointSliceRef,
  backendServiceRef,
  gatedPodRef,
  memberGroupRef,
  myIngressReferences,
} from './references.ts';
import { GroupMemberClient } from './group/member.ts';
import { TargetHealthBoard } from './targetHealthBoard.ts';

export { backendServices } from './references.ts';

/**
 * The MyIngress controller: load balancers whose targets follow Services' EndpointSlices.
 * `overrides` replace some of the default settings (tests).
 */
export function myIngressController(
  s: KindPlumbing,
  overrides: Partial<MyIngressSettings> = {},
): RunnableController {
  const settings: MyIngressSettings = { ...defaultMyIngressSettings, ...overrides };
  const targetHealth = new TargetHealthBoard();
  // What the adapter reads from the cluster: the objects its references watch (references.ts),
  // through the reader the controller hands the connector.
  const cluster = (refs: ReferenceReader<MyIngress>): MyIngressClusterDeps => ({
    service: (ns, name) => refs.get(backendServiceRef, ns, name),
    endpointSlices: (ns, svc) =>
      // Only the EndpointSlice controller's slices: a hand-made one could point the load balancer
      // at any address (backends.ts).
      refs
        .list(backendEndpointSliceRef, ns, svc)
        .filter((e) => isServiceEndpointSlice(e, ns, svc, endpointSliceManagersOf(s, ns))),
    backendCachesSynced: () =>
      refs.synced(backendServiceRef) && refs.synced(backendEndpointSliceRef) && refs.synced(gatedPodRef),
    gatedPod: (ns, name) => refs.get(gatedPodRef, ns, name),
    gatedPods: (ns) => refs.list(gatedPodRef, ns),
    ingressesIn: (ns) => refs.primaries(ns),
    targetHealth,
    gatePollMs: settings.gatePollMs,
    pollMs: settings.pollMs,
    fullCheckMs: settings.fullCheckMs,
    certificateListMaxAgeMs: settings.certificateListMaxAgeMs,
  });
  return new Controller<MyIngress, MyIngressDetails, MyIngressField>({
    type: myIngressType,
    connector: (refs) => {
      const deps = cluster(refs);
      // A member of a group (spec.group) touches no AWS: it reports from its group's status.
      const member = new GroupMemberClient({
        group: (name) => refs.get(memberGroupRef, '', name),
        synced: () => refs.synced(memberGroupRef),
        pollMs: settings.pollMs,
      });
      const own = tenantConnector({
        tenants: s.tenants,
        accounts: accountsOf(s),
        // One adapter (and its describe batchers) per identity and region, imported when the first
        // object needs it (adapterFor.ts loads the ELBv2 SDK).
        adapterFor: async (aws: AwsClients) =>
          (await import('./adapterFor.ts')).myIngressAdapterFor(aws, s.clock, deps),
        guard: (mr, g) =>
          checkMyIngress(
            g.policy,
            mr.spec,
            guardLookups(g.aws, hostCertificates(g.aws, s.clock, settings.certificateListMaxAgeMs)),
          ),
      });
      return {
        connect: (mr, ctx) => (mr.spec.group !== undefined ? Promise.resolve(member) : own.connect(mr, ctx)),
      };
    },
    ...controllerOptions(s),
    pollMs: settings.pollMs,
    // Services and their EndpointSlices named by forward actions, and the gated Pods of the namespace.
    references: myIngressReferences,
  });
}

/** The extra EndpointSlice managers the namespace's TeamPolicy trusts (none without a policy). */
function endpointSliceManagersOf(s: KindPlumbing, namespace: string): readonly string[] {
  const policy = currentPolicy(s.tenants, namespace);
  return (policy !== undefined ? loadBalancerGuardrailsOf(policy)?.endpointSliceManagers : undefined) ?? [];
}
