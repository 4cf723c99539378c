// What a MyIngressGroup refers to: its members (the MyIngresses whose spec.group names it, in every
// namespace), the Services their forwards name and those Services' EndpointSlices, and — with
// allowedNamespaces from Selector — the namespaces' labels. A member's change files the group again
// (its Services follow its members: `refiles`) and reconciles it; a member moving from one group to
// another reconciles both.
import { endpointSliceType, namespaceType, serviceType } from '../../../apis/core.ts';
import type { KubeObject } from '../../../apis/meta.ts';
import { everyIn, reference, refKey, type ReferenceReader } from '../../../runtime/references.ts';
import { myIngressType, type MyIngress } from '../api.ts';
import {
  backendServices,
  sliceService,
  type BackendEndpointSlice,
  type BackendService,
} from '../references.ts';
import type { MyIngressGroup } from './api.ts';

/** The key members are filed under: the group's name (cluster-scoped). Pure. */
export function groupKey(name: string): string {
  return refKey('', name);
}

/** The MyIngresses naming the group (spec.group.name), in every watched namespace. */
export const groupMemberRef = reference<MyIngressGroup, MyIngress>({
  name: 'MyIngress spec.group',
  type: myIngressType,
  targets: (g) => [groupKey(g.metadata.name)],
  filedUnder: (m) => (m.spec.group !== undefined ? groupKey(m.spec.group.name) : undefined),
  refiles: true,
});

/** The Services the members forward to, as `namespace/name` keys. Pure (reads the member cache). */
function memberServiceKeys(g: MyIngressGroup, refs: ReferenceReader<MyIngressGroup>): string[] {
  return refs
    .filed(groupMemberRef, groupKey(g.metadata.name))
    .flatMap((m) => [...backendServices(m)].map((s) => refKey(m.metadata.namespace ?? '', s)));
}

/** The Services the members' forwards name. */
export const groupServiceRef = reference<MyIngressGroup, BackendService>({
  name: 'members’ forward.service',
  type: serviceType,
  targets: memberServiceKeys,
});

/** The EndpointSlices of those Services, filed under their Service. */
export const groupEndpointSliceRef = reference<MyIngressGroup, BackendEndpointSlice>({
  name: 'members’ forward.service EndpointSlices',
  type: endpointSliceType,
  targets: memberServiceKeys,
  filedUnder: sliceService,
});

/** Namespaces, for their labels: only a group admitting by selector refers to them (all of them). */
export const groupNamespaceRef = reference<MyIngressGroup, KubeObject>({
  name: 'spec.allowedNamespaces.selector',
  type: namespaceType,
  targets: (g) => (g.spec.allowedNamespaces.from === 'Selector' ? [everyIn('')] : []),
});

/** Every reference a MyIngressGroup holds, for its controller. */
export const myIngressGroupReferences = [
  groupMemberRef,
  groupServiceRef,
  groupEndpointSliceRef,
  groupNamespaceRef,
] as const;
