/** Identifies a Kubernetes resource type for REST paths. */
export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural, e.g. `dnsrecords`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** The parts of an object every handler needs. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  managedFields?: unknown[];
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** `apiVersion` for a resource type: `v1` or `group/version`. Pure. */
export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** REST path for a collection or an object, optionally a subresource. Pure. */
export function resourcePath(
  t: ResourceType,
  opts: { namespace?: string | undefined; name?: string | undefined; subresource?: string | undefined } = {},
): string {
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns =
    t.namespaced && opts.namespace !== undefined ? `/namespaces/${encodeURIComponent(opts.namespace)}` : '';
  const name = opts.name !== undefined ? `/${encodeURIComponent(opts.name)}` : '';
  const sub = opts.subresource !== undefined && opts.name !== undefined ? `/${opts.subresource}` : '';
  return `${base}${ns}/${t.plural}${name}${sub}`;
}

/** The queue key of an object: `namespace/name`, or `name` for cluster-scoped objects. Pure. */
export function objectKey(meta: { namespace?: string | undefined; name: string }): string {
  return meta.namespace !== undefined && meta.namespace !== '' ? `${meta.namespace}/${meta.name}` : meta.name;
}

/** Splits a queue key back into namespace and name. Pure. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
