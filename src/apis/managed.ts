import type { KubeObject } from './meta.ts';

/** The finalizer every kind uses. */
export const finalizerName = 'aws.skylift.dev/cleanup';

/**
 * Annotation written (with a timestamp) right before an AWS create call and
 * removed once the created resource's identity is recorded in status. While
 * it is present and the resource cannot be found, the engine waits instead
 * of creating again: lookups by tag can lag a fresh create.
 */
export const createPendingAnnotation = 'aws.skylift.dev/create-pending';

/**
 * Annotation through which users ask a kind for a one-off operation (e.g.
 * ManagedDB's `snapshot <id>`); changing it triggers a reconcile.
 */
export const requestAnnotation = 'aws.skylift.dev/request';

/** Ownership tag keys on every AWS resource Skylift creates. */
export const ownershipTagKeys = {
  cluster: 'skylift.dev/cluster',
  owner: 'skylift.dev/owner',
  uid: 'skylift.dev/uid',
} as const;

/** What happens to the AWS resource when the CR is deleted. */
export type DeletionPolicy = 'Delete' | 'Orphan';
/** Whether Skylift may change AWS (Manage) or only report on it (ObserveOnly). */
export type ManagementPolicy = 'Manage' | 'ObserveOnly';

/** Spec fields every kind shares. */
export interface ManagedSpec {
  deletionPolicy?: DeletionPolicy;
  managementPolicy?: ManagementPolicy;
  /** Identifier of an existing AWS resource to adopt instead of creating one. */
  externalName?: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition, as metav1.Condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/**
 * Status fields every kind shares, written by the engine. A kind adds its own (arn, dnsName, …) in
 * an interface that extends this one, and its CRD schema lists exactly those (a unit test checks
 * the two agree, field by field).
 */
export interface ManagedStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** Where the AWS resource lives (recorded by the engine). */
  location?: { account: string; region: string };
}

/** A Skylift custom resource: its spec `S`, and its status `St` (the common fields and the kind's). */
export interface ManagedObject<
  S extends ManagedSpec = ManagedSpec,
  St extends ManagedStatus = ManagedStatus,
> extends KubeObject {
  spec: S;
  status?: St;
}

/**
 * A kind's own status fields — those its adapter reports from AWS, not the engine's common ones —
 * for an object type `T`. What an observation or a create hands the engine.
 */
export type KindStatusOf<T extends ManagedObject> = Omit<NonNullable<T['status']>, keyof ManagedStatus>;

/** The ownership a CR stamps on its AWS resources. */
export interface OwnershipTags {
  readonly cluster: string;
  /** `namespace/name` */
  readonly owner: string;
  readonly uid: string;
}

/** Ownership tags for a CR in a cluster. Pure. */
export function ownershipOf(obj: KubeObject, clusterId: string): OwnershipTags {
  return {
    cluster: clusterId,
    owner: `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`,
    uid: obj.metadata.uid ?? '',
  };
}

/** Ownership tags as an AWS tag map. Pure. */
export function ownershipTagMap(o: OwnershipTags): Record<string, string> {
  return {
    [ownershipTagKeys.cluster]: o.cluster,
    [ownershipTagKeys.owner]: o.owner,
    [ownershipTagKeys.uid]: o.uid,
  };
}

/** Reads ownership back from an AWS tag map; undefined when the resource carries no Skylift uid tag. Pure. */
export function ownershipFromTags(
  tags: Readonly<Record<string, string | undefined>>,
): OwnershipTags | undefined {
  const uid = tags[ownershipTagKeys.uid];
  if (uid === undefined || uid === '') return undefined;
  return { uid, owner: tags[ownershipTagKeys.owner] ?? '', cluster: tags[ownershipTagKeys.cluster] ?? '' };
}

/**
 * Who owns a resource, as the object whose marks are `ours` may be told: an object of its own
 * namespace in this cluster by `namespace/name` and uid; anything else only as "another
 * namespace" or "another cluster", so a tenant learns no other team's object names or uids from a
 * Conflict. Pure.
 */
export function ownerAsSeenBy(owner: OwnershipTags, ours: OwnershipTags): string {
  const namespaceOf = (o: string): string => o.split('/')[0] ?? '';
  if (owner.cluster !== '' && ours.cluster !== '' && owner.cluster !== ours.cluster)
    return 'a Skylift object of another cluster';
  if (owner.owner !== '' && namespaceOf(owner.owner) === namespaceOf(ours.owner))
    return `${owner.owner} (uid ${owner.uid})`;
  return 'a Skylift object in another namespace';
}
