// What a MyIngress refers to: the Services its forward actions name, their EndpointSlices, and the
// Pods of its namespace that carry the target-health gate. The controller watches each, indexes
// MyIngresses by what they name, and reconciles exactly those when one changes; the adapter reads
// them through the reference (controller.ts builds its cluster dependencies from the reader).
import { endpointSliceType, podType, serviceType } from '../../apis/core.ts';
import type { KubeObject } from '../../apis/meta.ts';
import { everyIn, reference, refKey } from '../../runtime/references.ts';
import type { MyIngress } from './api.ts';
import { myIngressGroupType, type MyIngressGroup } from './group/api.ts';
import { backendRefs } from './backends.ts';
import type { EndpointSliceLike, ServiceLike } from './desired.ts';
import { targetHealthGate, type PodLike } from './readinessGate.ts';

/** A Service as a MyIngress reads it. */
export type BackendService = KubeObject & ServiceLike;
/** An EndpointSlice as a MyIngress reads it. */
export type BackendEndpointSlice = KubeObject & EndpointSliceLike;
/** A Pod carrying the target-health gate, as a MyIngress reads it. */
export type GatedPod = KubeObject & PodLike;

/** The label by which the EndpointSlice controller names a slice's Service. */
const serviceNameLabel = 'kubernetes.io/service-name';

/** Services a MyIngress forwards to. Pure. */
export function backendServices(m: MyIngress): Set<string> {
  return new Set(backendRefs(m.spec).map((r) => r.service));
}

/** The key of the Service an EndpointSlice belongs to (its `kubernetes.io/service-name` label). Pure. */
export function sliceService(slice: KubeObject): string | undefined {
  const service = slice.metadata.labels?.[serviceNameLabel];
  return service === undefined ? undefined : refKey(slice.metadata.namespace ?? '', service);
}

/** The keys of the Services a MyIngress forwards to, in its namespace. Pure. */
function backendServiceKeys(m: MyIngress): string[] {
  const ns = m.metadata.namespace ?? '';
  return [...backendServices(m)].map((s) => refKey(ns, s));
}

/** The Services the forward actions name (`spec.listeners[].defaultAction`, `spec.rules[].action`). */
export const backendServiceRef = reference<MyIngress, BackendService>({
  name: 'forward.service',
  type: serviceType,
  targets: backendServiceKeys,
});

/**
 * The EndpointSlices of those Services, filed under their Service (the `kubernetes.io/service-name`
 * label): a slice of a Service a MyIngress forwards to reconciles it. Which slices count is the
 * adapter's to judge (isServiceEndpointSlice in backends.ts).
 */
export const backendEndpointSliceRef = reference<MyIngress, BackendEndpointSlice>({
  name: 'forward.service EndpointSlices',
  type: endpointSliceType,
  targets: backendServiceKeys,
  filedUnder: sliceService,
});

/**
 * Only Pods carrying the target-health gate (readinessGate.ts), every one of the namespace: one
 * whose containers turned ready is registered, and its gate opened, by the MyIngresses of its
 * namespace.
 */
export const gatedPodRef = reference<MyIngress, GatedPod>({
  name: 'target-health gated Pods',
  type: podType,
  labelSelector: `${targetHealthGate.label}=${targetHealthGate.enabled}`,
  targets: (m) => [everyIn(m.metadata.namespace ?? '')],
});

/** The MyIngressGroup a member names (spec.group): its status is the member's. */
export const memberGroupRef = reference<MyIngress, MyIngressGroup>({
  name: 'spec.group',
  type: myIngressGroupType,
  targets: (m) => (m.spec.group !== undefined ? [refKey('', m.spec.group.name)] : []),
});

/** Every reference a MyIngress holds, for its controller (in the order their watches are made). */
export const myIngressReferences = [
  backendServiceRef,
  backendEndpointSliceRef,
  gatedPodRef,
  memberGroupRef,
] as const;
