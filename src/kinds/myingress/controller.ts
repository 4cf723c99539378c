import { endpointSliceType, podType, serviceType } from '../../apis/core.ts';
import { myIngressType, type MyIngress } from './api.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import type { KubeObject } from '../../apis/meta.ts';
import { accountsOf, controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import type { MyIngressDetails, MyIngressField } from './adapter.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { currentPolicy, tenantConnector } from '../../tenancy/connector.ts';
import { checkMyIngress, guardLookups, loadBalancerGuardrailsOf } from './guardrails.ts';
import { defaultMyIngressSettings, type MyIngressSettings } from './settings.ts';
import { hostCertificates } from './acm.ts';
import { backendRefs, isServiceEndpointSlice } from './backends.ts';
import { targetHealthGate } from './readinessGate.ts';
import { TargetHealthBoard } from './targetHealthBoard.ts';

/** Services a MyIngress forwards to. Pure. */
export function backendServices(m: MyIngress): Set<string> {
  return new Set(backendRefs(m.spec).map((r) => r.service));
}

function referencing(
  ns: string | undefined,
  service: string | undefined,
  primaries: () => readonly MyIngress[],
): string[] {
  if (service === undefined) return [];
  return primaries()
    .filter((m) => m.metadata.namespace === ns && backendServices(m).has(service))
    .map((m) => `${m.metadata.namespace ?? ''}/${m.metadata.name}`);
}

/**
 * The MyIngress controller: load balancers whose targets follow Services' EndpointSlices.
 * `overrides` replace some of the default settings (tests).
 */
export function myIngressController(
  s: KindPlumbing,
  overrides: Partial<MyIngressSettings> = {},
): RunnableController {
  const settings: MyIngressSettings = { ...defaultMyIngressSettings, ...overrides };
  const holder: { controller?: Controller<MyIngress, MyIngressDetails, MyIngressField> } = {};
  const targetHealth = new TargetHealthBoard();
  // One adapter (and its describe batchers) per identity and region, imported when the first
  // object needs it (adapterFor.ts loads the ELBv2 SDK).
  const adapterFor = async (aws: AwsClients) =>
    (await import('./adapterFor.ts')).myIngressAdapterFor(aws, s.clock, {
      service: (ns, name) => holder.controller?.getSecondary(serviceType, `${ns}/${name}`),
      endpointSlices: (ns, svc) =>
        // Only the EndpointSlice controller's slices: a hand-made one could point the load balancer
        // at any address (backends.ts).
        (holder.controller?.secondaryObjects(endpointSliceType) ?? []).filter((e: KubeObject) =>
          isServiceEndpointSlice(e, ns, svc, endpointSliceManagersOf(s, ns)),
        ),
      backendCachesSynced: () =>
        holder.controller !== undefined &&
        holder.controller.secondarySynced(serviceType) &&
        holder.controller.secondarySynced(endpointSliceType) &&
        holder.controller.secondarySynced(podType),
      gatedPod: (ns, name) => holder.controller?.getSecondary(podType, `${ns}/${name}`),
      gatedPods: (ns) =>
        (holder.controller?.secondaryObjects(podType) ?? []).filter((p) => p.metadata.namespace === ns),
      ingressesIn: (ns) => (holder.controller?.list() ?? []).filter((m) => m.metadata.namespace === ns),
      targetHealth,
      gatePollMs: settings.gatePollMs,
      pollMs: settings.pollMs,
      fullCheckMs: settings.fullCheckMs,
      certificateListMaxAgeMs: settings.certificateListMaxAgeMs,
    });
  const controller = new Controller<MyIngress, MyIngressDetails, MyIngressField>({
    type: myIngressType,
    connector: tenantConnector({
      tenants: s.tenants,
      accounts: accountsOf(s),
      adapterFor,
      guard: (mr, g) =>
        checkMyIngress(
          g.policy,
          mr.spec,
          guardLookups(g.aws, hostCertificates(g.aws, s.clock, settings.certificateListMaxAgeMs)),
        ),
    }),
    ...controllerOptions(s),
    pollMs: settings.pollMs,
    watches: [
      {
        type: serviceType,
        map: (svc, primaries) => referencing(svc.metadata.namespace, svc.metadata.name, primaries),
      },
      {
        type: endpointSliceType,
        map: (slice, primaries) =>
          referencing(
            slice.metadata.namespace,
            slice.metadata.labels?.['kubernetes.io/service-name'],
            primaries,
          ),
      },
      {
        // Only Pods carrying the target-health gate (readinessGate.ts): one whose containers
        // turned ready is registered, and its gate opened, by the MyIngresses of its namespace.
        type: podType,
        labelSelector: `${targetHealthGate.label}=${targetHealthGate.enabled}`,
        map: (pod, primaries) =>
          primaries()
            .filter((m) => m.metadata.namespace === pod.metadata.namespace)
            .map((m) => `${m.metadata.namespace ?? ''}/${m.metadata.name}`),
      },
    ],
  });
  holder.controller = controller;
  return controller;
}

/** The extra EndpointSlice managers the namespace's TeamPolicy trusts (none without a policy). */
function endpointSliceManagersOf(s: KindPlumbing, namespace: string): readonly string[] {
  const policy = currentPolicy(s.tenants, namespace);
  return (policy !== undefined ? loadBalancerGuardrailsOf(policy)?.endpointSliceManagers : undefined) ?? [];
}
