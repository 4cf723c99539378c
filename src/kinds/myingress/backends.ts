// The backend Services a MyIngress forwards to, and which of them are not
// there: a Service that does not exist in the object's namespace, or one
// without the port the spec names. The load balancer works without them (the
// target group is empty), but a person must create the Service or correct
// the spec, so the object says so instead of being Ready.
import type { Condition } from '../../apis/managed.ts';
import type { ReadyState } from '../../runtime/adapter.ts';
import type { ActionSpec, MyIngressSpec } from './api.ts';
import type { ServiceLike } from './desired.ts';

/** Ready reasons for a backend that is not there. */
export const BackendReason = {
  /** No Service of that name in the MyIngress's namespace. */
  ServiceNotFound: 'ServiceNotFound',
  /** The Service exists but has no port with that number. */
  ServicePortNotFound: 'ServicePortNotFound',
} as const;
/** One of the {@link BackendReason} values. */
export type BackendReason = (typeof BackendReason)[keyof typeof BackendReason];

/** True for a Ready reason of {@link BackendReason}. Pure. */
export function isBackendReason(reason: string | undefined): reason is BackendReason {
  return reason === BackendReason.ServiceNotFound || reason === BackendReason.ServicePortNotFound;
}

/** One forward action of the spec: where it is and which Service port it names. */
export interface BackendRef {
  /** The path of its `service` field, e.g. `spec.rules[0].action.forward.service`. */
  readonly field: string;
  readonly service: string;
  readonly port: number;
}

/**
 * Every backend of the spec's forward actions with the path of its field (`forward.service`, or
 * `forward.services[j]` of a weighted forward):
 * listeners' default actions, then rules, each in spec order. Pure.
 */
export function backendRefs(spec: MyIngressSpec): BackendRef[] {
  const refs: BackendRef[] = [];
  const visit = (a: ActionSpec, at: string): void => {
    const s = a.forward?.service;
    if (s !== undefined) refs.push({ field: `${at}.forward.service`, service: s.name, port: s.port });
    for (const [j, w] of (a.forward?.services ?? []).entries())
      refs.push({ field: `${at}.forward.services[${j}]`, service: w.name, port: w.port });
  };
  (spec.listeners ?? []).forEach((l, i) => visit(l.defaultAction, `spec.listeners[${i}].defaultAction`));
  (spec.rules ?? []).forEach((r, i) => visit(r.action, `spec.rules[${i}].action`));
  return refs;
}

/** A backend that is not there, with every field that names it. */
export interface MissingBackend {
  readonly reason: BackendReason;
  readonly service: string;
  readonly port: number;
  /** The paths of the `service` fields naming it, in spec order (at least one). */
  readonly fields: readonly string[];
  /** The ports the Service has (empty when it does not exist). */
  readonly servicePorts: readonly number[];
}

/**
 * The backends of `spec` that are not there, judged by `lookup` (the
 * Service of that name in the object's namespace, from a cache that has
 * listed, or undefined when there is none): a missing Service once per name,
 * a missing port once per Service and port; in spec order. Empty when every
 * backend is there. Pure given `lookup`.
 */
export function missingBackends(
  spec: MyIngressSpec,
  lookup: (service: string) => ServiceLike | undefined,
): MissingBackend[] {
  const found = new Map<string, { fields: string[]; missing: Omit<MissingBackend, 'fields'> }>();
  for (const ref of backendRefs(spec)) {
    const svc = lookup(ref.service);
    const ports = (svc?.spec?.ports ?? []).map((p) => p.port);
    let key: string;
    let reason: BackendReason;
    if (svc === undefined) {
      key = `service\u0000${ref.service}`;
      reason = BackendReason.ServiceNotFound;
    } else if (!ports.includes(ref.port)) {
      key = `port\u0000${ref.service}\u0000${ref.port}`;
      reason = BackendReason.ServicePortNotFound;
    } else continue;
    const entry = found.get(key);
    if (entry !== undefined) entry.fields.push(ref.field);
    else
      found.set(key, {
        fields: [ref.field],
        missing: { reason, service: ref.service, port: ref.port, servicePorts: ports },
      });
  }
  return [...found.values()].map((e) => ({ ...e.missing, fields: e.fields }));
}

/**
 * Until the Service caches have listed, the backends cannot be judged: the
 * missing-backend verdict already written for this generation (the object's
 * Ready condition), so a restart neither calls the object Ready nor raises a
 * second Warning. Undefined when Ready holds no such verdict. Pure.
 */
export function carriedBackendsReady(
  ready: Condition | undefined,
  generation: number | undefined,
): ReadyState | undefined {
  if (ready?.status !== 'False' || !isBackendReason(ready.reason) || ready.observedGeneration !== generation)
    return undefined;
  return { ready: false, reason: ready.reason, message: ready.message, actionRequired: true };
}

/** How many missing backends a Ready message spells out before "and N more". */
const spelledOut = 3;

/**
 * The Ready state for missing backends of an object in `namespace`:
 * ServiceNotFound when any Service is missing, else ServicePortNotFound;
 * the message names each one's field and value and what to do, missing
 * Services first (the first three, then how many more). `actionRequired`: only a person can fix it.
 * Undefined when nothing is missing. Pure.
 */
export function missingBackendsReady(
  missing: readonly MissingBackend[],
  namespace: string,
): ReadyState | undefined {
  if (missing.length === 0) return undefined;
  const anyService = missing.some((m) => m.reason === BackendReason.ServiceNotFound);
  // Missing Services first: the message opens with what its reason says.
  const ordered = [
    ...missing.filter((m) => m.reason === BackendReason.ServiceNotFound),
    ...missing.filter((m) => m.reason !== BackendReason.ServiceNotFound),
  ];
  const sentences = ordered.slice(0, spelledOut).map((m) => describeMissing(m, namespace));
  if (missing.length > spelledOut) sentences.push(`(and ${missing.length - spelledOut} more)`);
  return {
    ready: false,
    reason: anyService ? BackendReason.ServiceNotFound : BackendReason.ServicePortNotFound,
    message: sentences.join(' '),
    actionRequired: true,
  };
}

/** One missing backend as a sentence: the field, what is wrong, what to do. Pure. */
function describeMissing(m: MissingBackend, namespace: string): string {
  const svc = quoteName(m.service);
  if (m.reason === BackendReason.ServiceNotFound) {
    const at = fieldsText(m.fields, '.name', JSON.stringify(m.service));
    if (!serviceNamePattern.test(m.service))
      return `${at}: no Service can have this name (a Service name is a lowercase DNS label); correct the name.`;
    return `${at}: Service ${svc} does not exist in namespace ${namespace}; create Service ${svc} in namespace ${namespace} or correct the name.`;
  }
  const at = fieldsText(m.fields, '.port', String(m.port));
  const has = m.servicePorts.length > 0 ? `it has ${m.servicePorts.join(', ')}` : 'it has none';
  return `${at}: Service ${svc} in namespace ${namespace} has no port ${m.port} (${has}); add port ${m.port} to Service ${svc} or correct the port.`;
}

/** `<first field><suffix> <value>`, then the other fields naming the same backend. Pure. */
function fieldsText(fields: readonly string[], suffix: string, value: string): string {
  const [first, ...others] = fields.map((f) => `${f}${suffix}`);
  const also = others.length > 0 ? ` (also ${others.join(', ')})` : '';
  return `${first ?? 'spec'} ${value}${also}`;
}

/** What a Service's name must look like (an RFC 1035 label), so a name that is not one can never exist. */
const serviceNamePattern = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A Service name as it reads in a sentence: bare when it is a valid name, else quoted. Pure. */
function quoteName(name: string): string {
  return serviceNamePattern.test(name) ? name : JSON.stringify(name);
}

/** The label the EndpointSlice controller puts on the slices it manages, and its value. */
export const endpointSliceManagedBy = {
  label: 'endpointslice.kubernetes.io/managed-by',
  controller: 'endpointslice-controller.k8s.io',
} as const;

/** The entry of a TeamPolicy's endpointSliceManagers that trusts every slice of the namespace, with any manager or none. */
export const anyEndpointSliceManager = '*';

/**
 * Whether an EndpointSlice is one Kubernetes' EndpointSlice controller made for `service` in
 * `namespace`: only those carry Pod addresses the Service's selector chose. A slice anyone else
 * made (a hand-made one, another controller's) could put any address — another team's Pod —
 * behind the load balancer, so its addresses are registered only when its manager is one of
 * `alsoManagedBy`; {@link anyEndpointSliceManager} there trusts every slice of the Service, also
 * one naming no manager (a platform whose RBAC keeps others from writing EndpointSlices). Pure.
 */
export function isServiceEndpointSlice(
  slice: { metadata: { namespace?: string; labels?: Readonly<Record<string, string>> } },
  namespace: string,
  service: string,
  alsoManagedBy: readonly string[] = [],
): boolean {
  const labels = slice.metadata.labels ?? {};
  const manager = labels[endpointSliceManagedBy.label];
  return (
    slice.metadata.namespace === namespace &&
    labels['kubernetes.io/service-name'] === service &&
    (alsoManagedBy.includes(anyEndpointSliceManager) ||
      (manager !== undefined &&
        (manager === endpointSliceManagedBy.controller || alsoManagedBy.includes(manager))))
  );
}
