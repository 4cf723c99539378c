// The custom-resource side of the invariants: what the apiserver says about
// each Skylift object, reduced to what invariants.ts compares.
import type { DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';
import {
  forwardBackends,
  myIngressType,
  type MyIngress,
  type MyIngressSpec,
} from '../../src/kinds/myingress/api.ts';
import { recordFqdn } from '../../src/providers/route53/names.ts';
import { ConditionType } from '../../src/runtime/conditions.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath, type ResourceType } from '../../src/apis/meta.ts';
import type { ManagedObject } from '../../src/apis/managed.ts';
import type { CrState, SkyliftKind } from './invariants.ts';

const typesByKind: Readonly<Record<SkyliftKind, ResourceType>> = {
  DNSRecord: dnsRecordType,
  MyIngress: myIngressType,
  ManagedDB: managedDbType,
};

/** What a MyIngress spec asks AWS for: target groups (distinct Service/port), listener ports, rules. Pure. */
export function myIngressExpectations(spec: MyIngressSpec): {
  targetGroups: number;
  listenerPorts: number[];
  rules: number;
} {
  const backends = new Set<string>();
  const actions = [
    ...(spec.listeners ?? []).map((l) => l.defaultAction),
    ...(spec.rules ?? []).map((r) => r.action),
  ];
  for (const a of actions) for (const s of forwardBackends(a.forward)) backends.add(`${s.name}:${s.port}`);
  return {
    targetGroups: backends.size,
    listenerPorts: (spec.listeners ?? []).map((l) => l.port),
    rules: (spec.rules ?? []).length,
  };
}

/** The record a DNSRecord manages: fully qualified name and type, or undefined without a zone name. Pure. */
export function dnsRecordTarget(obj: DNSRecord): { fqdn: string; type: string } | undefined {
  const fqdn =
    typeof obj.status?.fqdn === 'string'
      ? obj.status.fqdn.toLowerCase()
      : obj.spec.zoneName !== undefined
        ? recordFqdn(obj.spec.name, obj.spec.zoneName)
        : undefined;
  return fqdn === undefined ? undefined : { fqdn, type: obj.spec.type };
}

/** Reduces a Skylift object to what the invariants compare. Pure. */
export function crStateOf(kind: SkyliftKind, obj: ManagedObject): CrState {
  const ready = obj.status?.conditions?.find((c) => c.type === ConditionType.Ready);
  const base = {
    kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
    uid: obj.metadata.uid ?? '',
    ready: ready?.status === 'True',
    readyDetail: ready === undefined ? 'no Ready condition' : `${ready.reason}: ${ready.message}`,
    deleting: obj.metadata.deletionTimestamp !== undefined,
    finalizers: obj.metadata.finalizers ?? [],
  };
  if (kind === 'MyIngress') {
    const e = myIngressExpectations((obj as MyIngress).spec);
    return {
      ...base,
      expectedTargetGroups: e.targetGroups,
      expectedListenerPorts: e.listenerPorts,
      expectedRules: e.rules,
    };
  }
  if (kind === 'DNSRecord') {
    const record = dnsRecordTarget(obj as DNSRecord);
    return record === undefined ? base : { ...base, record };
  }
  return base;
}

/** Lists every Skylift object in the namespace(s) (one LIST per kind and namespace) as {@link CrState}s. */
export async function listCrStates(
  client: KubeClient,
  namespaces: string | readonly string[],
): Promise<CrState[]> {
  const out: CrState[] = [];
  for (const namespace of typeof namespaces === 'string' ? [namespaces] : namespaces)
    for (const kind of Object.keys(typesByKind) as SkyliftKind[]) {
      const list = await client.get<{ items: ManagedObject[] }>(
        resourcePath(typesByKind[kind], { namespace }),
      );
      out.push(...list.items.map((o) => crStateOf(kind, o)));
    }
  return out;
}
